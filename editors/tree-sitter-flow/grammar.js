// tree-sitter grammar for Flow (.flow), written from grammar/Flow.g4. It accepts what that grammar
// accepts, plus a connector without parentheses (`into stdout`), and keeps the same precedence.

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  in: 4,
  compare: 5,
  add: 6,
  multiply: 7,
  unary: 8,
  postfix: 9,
};

// Keywords the ANTLR `ident` rule also accepts as names.
const SOFT_KEYWORDS = [
  'time', 'key', 'event', 'error', 'fail', 'skip', 'session', 'tumbling', 'sliding', 'every',
  'lateness', 'processing', 'watermark', 'idle', 'format', 'within', 'timestamp', 'dead_letter',
  'late', 'zone',
];

function commaSep1(rule) {
  return seq(rule, repeat(seq(',', rule)));
}

function commaSepTrailing(rule) {
  return optional(seq(commaSep1(rule), optional(',')));
}

module.exports = grammar({
  name: 'flow',

  extras: ($) => [/\s/, $.comment],

  word: ($) => $.identifier,

  conflicts: ($) => [],

  rules: {
    source_file: ($) => repeat($._statement),

    _statement: ($) => seq(
      choice(
        $.param_declaration,
        $.schema_declaration,
        $.extern_function_declaration,
        $.stream_declaration,
        $.pipeline,
      ),
      optional(';'),
    ),

    param_declaration: ($) => seq(
      'param', field('name', $._name), ':', field('type', $.type),
      optional(seq('=', field('value', $._expression))),
    ),

    schema_declaration: ($) => seq(
      'schema', field('name', $._name), '{', commaSepTrailing($.field_declaration), '}',
    ),

    // `user: string`, or the name in the data as a string and the script's name after `as`:
    // `"user-id" as user_id: string` (`as` may be left out when the string is an identifier).
    field_declaration: ($) => seq(
      choice(
        field('name', $._name),
        seq(field('wire_name', $.string), optional(seq('as', field('name', $._name)))),
      ),
      ':', field('type', $.type),
    ),

    extern_function_declaration: ($) => seq(
      'extern', 'fn', field('name', $._name),
      '(', commaSepTrailing($.parameter), ')',
      '->', field('return_type', $.type),
      'from', field('header', $.string),
    ),

    parameter: ($) => seq(field('name', $._name), ':', field('type', $.type)),

    type: ($) => seq(
      field('name', $._name),
      optional(seq('<', field('argument', $.type), '>')),
      optional(field('nullable', '?')),
    ),

    stream_declaration: ($) => seq('stream', field('name', $._name), '=', field('value', $.pipeline)),

    pipeline: ($) => prec.right(seq(
      field('head', choice($.source, $._name)),
      repeat(seq('|', field('operator', $._operator))),
    )),

    source: ($) => prec.right(seq(
      'from', field('connector', $.connector),
      repeat(choice($.format_clause, $.schema_clause, $.event_time_clause, $.on_error_clause)),
    )),

    connector: ($) => prec.right(seq(field('name', $._name), optional($.arguments))),

    arguments: ($) => seq('(', commaSepTrailing($.named_argument), ')'),

    named_argument: ($) => seq(field('name', $._name), ':', field('value', $._expression)),

    format_clause: ($) => prec.right(seq('format', field('name', $._name), optional($.arguments))),

    schema_clause: ($) => seq('as', field('schema', $._name)),

    event_time_clause: ($) => prec.right(seq(
      'event', 'time', field('time', $._expression),
      'watermark', field('watermark', $._duration_ref),
      optional(seq('idle', field('idle', $._duration_ref))),
    )),

    on_error_clause: ($) => seq('on', 'error', field('policy', $.error_policy)),

    error_policy: ($) => prec.right(choice(
      'fail',
      'skip',
      seq('dead_letter', field('connector', $.connector), optional($.format_clause)),
    )),

    _duration_ref: ($) => choice($.duration, $._name),

    _operator: ($) => choice(
      $.where_operator,
      $.key_by_operator,
      $.window_operator,
      $.aggregate_operator,
      $.select_operator,
      $.explode_operator,
      $.union_operator,
      $.join_operator,
      $.into_operator,
    ),

    where_operator: ($) => seq('where', field('condition', $._expression)),

    key_by_operator: ($) => prec.right(seq('key', 'by', commaSep1($._expression))),

    window_operator: ($) => seq('window', $.window_spec, optional($.late_route)),

    // `on late into <sink>`: where the window's late records go. Not part of window_spec: join
    // windows have no such clause (as in grammar/Flow.g4, where `late` is a name, not a keyword).
    late_route: ($) => prec.right(seq(
      'on', 'late', 'into', field('connector', $.connector),
      optional($.format_clause),
      optional(field('delivery', choice('exactly_once', 'at_least_once'))),
    )),

    window_spec: ($) => prec.right(seq(
      choice(
        seq(field('kind', 'tumbling'), field('size', $._duration_ref)),
        seq(field('kind', 'sliding'), field('size', $._duration_ref), 'every', field('slide', $._duration_ref)),
        seq(field('kind', 'session'), field('gap', $._duration_ref)),
      ),
      // `zone "Europe/Berlin"` or `zone tz` (a string param): windows aligned to that zone's wall clock.
      optional(seq('zone', field('zone', choice($.string, $._name)))),
      optional(seq('lateness', field('lateness', $._duration_ref))),
      optional(seq('processing', 'time')),
    )),

    aggregate_operator: ($) => prec.right(seq('aggregate', commaSep1($.named_expression))),

    select_operator: ($) => prec.right(seq('select', commaSep1(choice($.star, $.named_expression)))),

    named_expression: ($) => prec.right(seq(
      field('value', $._expression),
      optional(seq('as', field('alias', $._name))),
    )),

    explode_operator: ($) => seq('explode', field('value', $._expression), 'as', field('alias', $._name)),

    union_operator: ($) => prec.right(seq('union', commaSep1($._name))),

    join_operator: ($) => seq(
      'join', field('right', $._name), 'on', field('condition', $._expression),
      choice(
        seq('within', field('within', $._duration_ref)),
        seq('window', $.window_spec),
      ),
    ),

    into_operator: ($) => prec.right(seq(
      'into', field('connector', $.connector),
      optional($.format_clause),
      optional(field('delivery', choice('exactly_once', 'at_least_once'))),
    )),

    _expression: ($) => choice(
      $.binary_expression,
      $.unary_expression,
      $.in_expression,
      $.is_null_expression,
      $.field_expression,
      $.index_expression,
      $.call_expression,
      $.cast_expression,
      $.case_expression,
      $.list,
      $.parenthesized_expression,
      $.timestamp_literal,
      $.integer,
      $.float,
      $.string,
      $.duration,
      $.true,
      $.false,
      $.null,
      $._name,
    ),

    binary_expression: ($) => choice(
      ...[
        ['or', PREC.or],
        ['and', PREC.and],
        ['==', PREC.compare], ['!=', PREC.compare], ['<', PREC.compare],
        ['<=', PREC.compare], ['>', PREC.compare], ['>=', PREC.compare],
        ['+', PREC.add], ['-', PREC.add],
        ['*', PREC.multiply], ['/', PREC.multiply], ['%', PREC.multiply],
      ].map(([op, p]) => prec.left(p, seq(
        field('left', $._expression), field('operator', op), field('right', $._expression),
      ))),
    ),

    unary_expression: ($) => choice(
      prec(PREC.unary, seq(field('operator', '-'), field('operand', $._expression))),
      prec(PREC.not, seq(field('operator', 'not'), field('operand', $._expression))),
    ),

    in_expression: ($) => prec.left(PREC.in, seq(
      field('value', $._expression), optional('not'), 'in',
      '(', commaSep1($._expression), ')',
    )),

    is_null_expression: ($) => prec.left(PREC.in, seq(
      field('value', $._expression), 'is', optional('not'), $.null,
    )),

    field_expression: ($) => prec(PREC.postfix, seq(
      field('value', $._expression), '.', field('field', $._name),
    )),

    index_expression: ($) => prec(PREC.postfix, seq(
      field('value', $._expression), '[', field('index', $._expression), ']',
    )),

    call_expression: ($) => prec(PREC.postfix, seq(
      field('function', $._name),
      '(', optional(commaSep1(choice($.star, $._expression))), ')',
    )),

    cast_expression: ($) => seq(
      'cast', '(', field('value', $._expression), 'as', field('type', $.type), ')',
    ),

    case_expression: ($) => seq(
      'case', repeat1($.when_clause), optional($.else_clause), 'end',
    ),

    when_clause: ($) => seq('when', field('condition', $._expression), 'then', field('value', $._expression)),

    else_clause: ($) => seq('else', field('value', $._expression)),

    list: ($) => seq('[', optional(commaSep1($._expression)), ']'),

    parenthesized_expression: ($) => seq('(', $._expression, ')'),

    timestamp_literal: ($) => seq('timestamp', $.string),

    star: (_) => '*',

    _name: ($) => choice($.identifier, alias(choice(...SOFT_KEYWORDS), $.identifier)),

    identifier: (_) => /[a-zA-Z_][a-zA-Z0-9_]*/,

    duration: (_) => token(seq(/[0-9]+/, choice('ms', 's', 'm', 'h', 'd'))),

    float: (_) => token(choice(
      seq(/[0-9]+/, '.', /[0-9]+/, optional(seq(/[eE]/, optional(/[+-]/), /[0-9]+/))),
      seq(/[0-9]+/, /[eE]/, optional(/[+-]/), /[0-9]+/),
    )),

    integer: (_) => /[0-9]+/,

    string: ($) => seq(
      '"',
      repeat(choice($.string_content, $.escape_sequence)),
      token.immediate('"'),
    ),

    string_content: (_) => token.immediate(prec(1, /[^"\\\r\n]+/)),

    // Any escape lexes (the compiler reports unknown ones); `\u{e9}` is one token.
    escape_sequence: (_) => token.immediate(/\\(u\{[0-9a-fA-F]{1,6}\}|[^\r\n])/),

    true: (_) => 'true',
    false: (_) => 'false',
    null: (_) => 'null',

    comment: (_) => token(choice(
      seq('//', /[^\r\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});

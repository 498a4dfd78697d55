; Flow highlights for Helix. Generated from editors/tree-sitter-flow/queries/highlights.scm
; by editors/tools/gen-queries.js; edit the base file and rerun the script.

(comment) @comment

(string) @string
(escape_sequence) @constant.character.escape

(integer) @constant.numeric.integer
(duration) @constant.numeric.integer
(float) @constant.numeric.float
(true) @constant.builtin.boolean
(false) @constant.builtin.boolean
(null) @constant.builtin

; Keywords

["param" "schema" "stream"] @keyword
["extern" "fn"] @keyword.function
["from" "into" "where" "key" "by" "aggregate" "select" "explode" "union" "format" "as"
 "event" "time" "watermark" "idle" "processing" "on"] @keyword
["window" "tumbling" "sliding" "session" "every" "zone" "lateness"] @keyword
["join" "within"] @keyword
["error" "fail" "skip" "dead_letter"] @keyword.control.exception
["exactly_once" "at_least_once"] @keyword.storage.modifier
["case" "when" "then" "else" "end"] @keyword.control.conditional
["and" "or" "not" "in" "is" "cast"] @keyword.operator
(timestamp_literal "timestamp" @type.builtin)

; Declarations

(param_declaration name: (identifier) @constant)
(schema_declaration name: (identifier) @type)
(field_declaration name: (identifier) @variable.other.member)
(stream_declaration name: (identifier) @variable)
(extern_function_declaration name: (identifier) @function)
(parameter name: (identifier) @variable.parameter)
(named_argument name: (identifier) @variable.parameter)
(schema_clause schema: (identifier) @type)
(named_expression alias: (identifier) @variable)
(explode_operator alias: (identifier) @variable)
(field_expression field: (identifier) @variable.other.member)

; Types

((type name: (identifier) @type.builtin)
 (#match? @type.builtin "^(bool|int|float|string|bytes|timestamp|duration|list)$"))
((type name: (identifier) @type)
 (#not-match? @type "^(bool|int|float|string|bytes|timestamp|duration|list)$"))

; Connectors and formats

((connector name: (identifier) @namespace)
 (#match? @namespace "^(kafka|file|stdin|datagen|nexmark|stdout|blackhole)$"))
((connector name: (identifier) @namespace)
 (#not-match? @namespace "^(kafka|file|stdin|datagen|nexmark|stdout|blackhole)$"))
(format_clause name: (identifier) @constant.builtin)

; Calls: registry functions and aggregates (kept in sync by editors/tools/sync-functions.js)

;; BEGIN registry functions
((call_expression function: (identifier) @function.builtin)
 (#match? @function.builtin "^(abs|approx_distinct|array_contains|avg|cardinality|ceil|coalesce|concat|contains|count|count_distinct|date_trunc|day|day_of_week|element_at|ends_with|exp|first|floor|format_timestamp|greatest|hash|hour|last|least|length|ln|log10|lower|lpad|ltrim|max|min|minute|mod|month|now|nullif|parse_float|parse_int|parse_timestamp|pow|regexp_extract|regexp_like|replace|reverse|round|rpad|rtrim|second|sign|split|sqrt|starts_with|substr|sum|to_millis|to_string|to_timestamp|trim|upper|year)$"))
((call_expression function: (identifier) @function)
 (#not-match? @function "^(abs|approx_distinct|array_contains|avg|cardinality|ceil|coalesce|concat|contains|count|count_distinct|date_trunc|day|day_of_week|element_at|ends_with|exp|first|floor|format_timestamp|greatest|hash|hour|last|least|length|ln|log10|lower|lpad|ltrim|max|min|minute|mod|month|now|nullif|parse_float|parse_int|parse_timestamp|pow|regexp_extract|regexp_like|replace|reverse|round|rpad|rtrim|second|sign|split|sqrt|starts_with|substr|sum|to_millis|to_string|to_timestamp|trim|upper|year)$"))
;; END registry functions

; Operators and punctuation

(binary_expression operator: _ @operator)
(unary_expression operator: "-" @operator)
["|" "=" "->" "?"] @operator
(type ["<" ">"] @punctuation.bracket)
["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," "." ":" ";"] @punctuation.delimiter
(star) @special

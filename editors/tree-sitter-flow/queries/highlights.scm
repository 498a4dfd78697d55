; Highlights for Flow. Capture names follow Neovim's conventions; editors/tools/gen-queries.js
; derives the Helix and Zed variants (and the Neovim copy) from this file. Patterns never overlap,
; so the result is the same whether an editor lets the first or the last match win.

(comment) @comment

(string) @string
(escape_sequence) @string.escape

(integer) @number
(duration) @number
(float) @number.float
(true) @boolean
(false) @boolean
(null) @constant.builtin

; Keywords

["param" "schema" "stream"] @keyword
["extern" "fn"] @keyword.function
["from" "into" "where" "key" "by" "aggregate" "select" "explode" "union" "format" "as"
 "event" "time" "watermark" "idle" "processing" "on"] @keyword
["window" "tumbling" "sliding" "session" "every" "zone" "lateness"] @keyword
["join" "within"] @keyword
["error" "fail" "skip" "dead_letter"] @keyword.exception
["exactly_once" "at_least_once"] @keyword.modifier
["case" "when" "then" "else" "end"] @keyword.conditional
["and" "or" "not" "in" "is" "cast"] @keyword.operator
(timestamp_literal "timestamp" @type.builtin)

; Declarations

(param_declaration name: (identifier) @constant)
(schema_declaration name: (identifier) @type.definition)
(field_declaration name: (identifier) @variable.member)
(stream_declaration name: (identifier) @variable)
(extern_function_declaration name: (identifier) @function)
(parameter name: (identifier) @variable.parameter)
(named_argument name: (identifier) @variable.parameter)
(schema_clause schema: (identifier) @type)
(named_expression alias: (identifier) @variable)
(explode_operator alias: (identifier) @variable)
(field_expression field: (identifier) @variable.member)

; Types

((type name: (identifier) @type.builtin)
 (#match? @type.builtin "^(bool|int|float|string|bytes|timestamp|duration|list)$"))
((type name: (identifier) @type)
 (#not-match? @type "^(bool|int|float|string|bytes|timestamp|duration|list)$"))

; Connectors and formats

((connector name: (identifier) @module.builtin)
 (#match? @module.builtin "^(kafka|file|stdin|datagen|nexmark|stdout|blackhole)$"))
((connector name: (identifier) @module)
 (#not-match? @module "^(kafka|file|stdin|datagen|nexmark|stdout|blackhole)$"))
(format_clause name: (identifier) @constant.builtin)

; Calls: registry functions and aggregates (kept in sync by editors/tools/sync-functions.js)

;; BEGIN registry functions
((call_expression function: (identifier) @function.builtin)
 (#match? @function.builtin "^(abs|approx_distinct|array_contains|avg|cardinality|ceil|coalesce|concat|contains|count|count_distinct|date_trunc|day|day_of_week|element_at|ends_with|exp|first|floor|format_timestamp|greatest|hash|hour|last|least|length|ln|log10|lower|lpad|ltrim|max|min|minute|mod|month|now|nullif|parse_float|parse_int|parse_timestamp|pow|regexp_extract|regexp_like|replace|reverse|round|rpad|rtrim|second|sign|split|sqrt|starts_with|substr|sum|to_millis|to_string|to_timestamp|trim|upper|year)$"))
((call_expression function: (identifier) @function.call)
 (#not-match? @function.call "^(abs|approx_distinct|array_contains|avg|cardinality|ceil|coalesce|concat|contains|count|count_distinct|date_trunc|day|day_of_week|element_at|ends_with|exp|first|floor|format_timestamp|greatest|hash|hour|last|least|length|ln|log10|lower|lpad|ltrim|max|min|minute|mod|month|now|nullif|parse_float|parse_int|parse_timestamp|pow|regexp_extract|regexp_like|replace|reverse|round|rpad|rtrim|second|sign|split|sqrt|starts_with|substr|sum|to_millis|to_string|to_timestamp|trim|upper|year)$"))
;; END registry functions

; Operators and punctuation

(binary_expression operator: _ @operator)
(unary_expression operator: "-" @operator)
["|" "=" "->" "?"] @operator
(type ["<" ">"] @punctuation.bracket)
["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," "." ":" ";"] @punctuation.delimiter
(star) @character.special

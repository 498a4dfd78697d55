" Vim syntax file for Flow, a streaming dataflow language (.flow).
" The keywords are those of grammar/Flow.g4 and the function names those of the stdlib registry
" (docs/functions.md); editors/tests/drift.test.js fails when they drift apart.
if exists('b:current_syntax')
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

syntax case match
syntax iskeyword @,48-57,_,192-255

" Names at declaration sites, named-argument labels, aliases (matches: keywords win over them).
syntax match flowLabel "\<\h\w*\ze\s*:"
syntax match flowParamName "\%(\<param\s\+\)\@<=\h\w*"
syntax match flowStreamName "\%(\<stream\s\+\)\@<=\h\w*"
syntax match flowSchemaName "\%(\<schema\s\+\)\@<=\h\w*"
syntax match flowAlias "\%(\<as\s\+\)\@<=\h\w*"
syntax match flowSchemaRef "\%(\<as\s\+\)\@<=\u\w*"
syntax region flowSchemaBody matchgroup=flowBrace start="\%(\<schema\s\+\h\w*\s*\)\@<={" end="}"
      \ contains=flowFieldName,flowFieldAs,flowString,flowType,flowTypeName,flowOperator,flowComment,flowBlockComment,flowTimestamp
syntax match flowFieldName "\<\h\w*\ze\s*:" contained
" `"user-id" as user_id: string`: a field's name in the data, then the name scripts use.
syntax match flowFieldAs "\%(\"\s*\)\@<=\<as\>" contained
syntax match flowTypeName "\%(:\s*\)\@<=\h\w*" contained

" Calls: any name before `(`; registry functions, aggregates and connectors override it.
syntax match flowCall "\<\h\w*\ze\s*("
" BEGIN registry functions
syntax match flowAggregate "\<\%(approx_distinct\|count_distinct\|count\|first\|last\|avg\|max\|min\|sum\)\ze\s*("
syntax match flowFunction "\<\%(format_timestamp\|parse_timestamp\|array_contains\|regexp_extract\|to_timestamp\|cardinality\|day_of_week\|parse_float\|regexp_like\|starts_with\|date_trunc\|element_at\|ends_with\|parse_int\|to_millis\|to_string\|coalesce\|contains\|greatest\|replace\|reverse\|concat\|length\|minute\|nullif\|second\|substr\|floor\|least\|log10\|lower\|ltrim\|month\|round\|rtrim\|split\|upper\|ceil\|hash\|hour\|lpad\|rpad\|sign\|sqrt\|trim\|year\|abs\|day\|exp\|mod\|now\|pow\|ln\)\ze\s*("
" END registry functions
syntax match flowConnector "\<\%(kafka\|file\|stdin\|datagen\|nexmark\|stdout\|blackhole\)\>\ze\s*("
syntax match flowConnector "\%(\<\%(from\|into\|dead_letter\)\s\+\)\@<=\h\w*"
syntax match flowFormat "\%(\<format\s\+\)\@<=\h\w*"
syntax match flowFunctionName "\%(\<fn\s\+\)\@<=\h\w*"

" Types where a type is expected: after `:` and `->`, inside `< >`, and in cast(x as T).
syntax match flowType "\%(\%(:\|->\|<\)\s*\)\@<=\%(bool\|int\|float\|string\|bytes\|duration\|list\)\>"
syntax match flowType "\%(\<as\s\+\)\@<=\%(bool\|int\|float\|string\|bytes\|duration\|list\)\>\ze\s*[<?)]"

" Keywords (every literal word of grammar/Flow.g4).
syntax keyword flowDeclaration param schema stream extern fn
syntax keyword flowPipeline from into where key by aggregate select explode union format as
syntax keyword flowPipeline event time watermark idle processing on
syntax keyword flowErrorPolicy error fail skip dead_letter
syntax keyword flowWindow window tumbling sliding session every zone lateness
syntax keyword flowJoin join within
syntax keyword flowDelivery exactly_once at_least_once
syntax keyword flowConditional case when then else end
syntax keyword flowCast cast
syntax keyword flowOperatorWord and or not in is
syntax keyword flowBoolean true false
syntax keyword flowNull null
syntax keyword flowTimestamp timestamp
syntax keyword flowConstant earliest latest
syntax keyword flowWindowField window_start window_end

" Numbers: a duration is digits with a unit (250ms 5s 1m 2h 1d).
syntax match flowNumber "\<\d\+\>"
syntax match flowFloat "\<\d\+\.\d\+\%([eE][+-]\=\d\+\)\=\>"
syntax match flowFloat "\<\d\+[eE][+-]\=\d\+\>"
syntax match flowDuration "\<\d\+\%(ms\|s\|m\|h\|d\)\>"

syntax match flowOperator "==\|!=\|<=\|>=\|->\|[<>+\-*/%=?]"
syntax match flowPipe "|"

" Strings end at their closing quote or, unterminated, at the end of the line.
syntax region flowString start=+"+ skip=+\\\\\|\\"+ end=+"+ end=+$+ oneline
      \ contains=flowEscapeError,flowEscape
syntax match flowEscapeError "\\." contained
syntax match flowEscape "\\\%([\\\"'nrt0]\|u{\x\{1,6}}\|u\x\{4}\)" contained

syntax keyword flowTodo TODO FIXME XXX NOTE contained
syntax match flowComment "//.*$" contains=flowTodo,@Spell
syntax region flowBlockComment start="/\*" end="\*/" contains=flowTodo,@Spell fold

syntax sync ccomment flowBlockComment minlines=50

highlight default link flowDeclaration Keyword
highlight default link flowPipeline Statement
highlight default link flowFieldAs Statement
highlight default link flowErrorPolicy Exception
highlight default link flowWindow Keyword
highlight default link flowJoin Keyword
highlight default link flowDelivery StorageClass
highlight default link flowConditional Conditional
highlight default link flowCast Keyword
highlight default link flowOperatorWord Operator
highlight default link flowBoolean Boolean
highlight default link flowNull Constant
highlight default link flowConstant Constant
highlight default link flowTimestamp Type
highlight default link flowType Type
highlight default link flowTypeName Type
highlight default link flowSchemaRef Type
highlight default link flowSchemaName Typedef
highlight default link flowParamName Identifier
highlight default link flowStreamName Identifier
highlight default link flowFieldName Identifier
highlight default link flowAlias Identifier
highlight default link flowFunctionName Function
highlight default link flowLabel Label
highlight default link flowCall Function
highlight default link flowFunction Function
highlight default link flowAggregate Function
highlight default link flowConnector Structure
highlight default link flowFormat Special
highlight default link flowWindowField Special
highlight default link flowString String
highlight default link flowEscape SpecialChar
highlight default link flowEscapeError Error
highlight default link flowNumber Number
highlight default link flowFloat Float
highlight default link flowDuration Number
highlight default link flowOperator Operator
highlight default link flowPipe Operator
highlight default link flowBrace Delimiter
highlight default link flowComment Comment
highlight default link flowBlockComment Comment
highlight default link flowTodo Todo

let b:current_syntax = 'flow'
let &cpo = s:cpo_save
unlet s:cpo_save

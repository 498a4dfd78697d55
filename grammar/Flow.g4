// The Flow language grammar. compiler/parse/ turns the parse tree into flow::ast; nothing else
// sees ANTLR types. Statements need no separator; an optional `;` is accepted after each.
// Keywords that are also useful as names (time, key, session, ...) are "soft": the `ident` rule
// accepts them wherever a name is expected.
grammar Flow;

program : statement* EOF ;

statement
  : paramDecl ';'?
  | schemaDecl ';'?
  | externFnDecl ';'?
  | streamDecl ';'?
  | pipeline ';'?
  ;

paramDecl : PARAM ident ':' typeRef ('=' expr)? ;

schemaDecl : SCHEMA ident '{' (fieldDecl (',' fieldDecl)* ','?)? '}' ;
// A field is named by an identifier, or by its name in the data as a string followed by the name
// scripts use: `"user-id" as user_id: string`. `as` may be left out when the string's text is an
// identifier (`"plain": int`); compiler/parse/ reports a missing one.
fieldDecl : (ident | STRING (AS ident)?) ':' typeRef ;

externFnDecl
  : EXTERN FN ident '(' (fnParam (',' fnParam)* ','?)? ')' '->' typeRef FROM STRING ;
fnParam : ident ':' typeRef ;

// `int`, `list<string>`, `string?`, or a schema name.
typeRef : ident ('<' typeRef '>')? QUESTION? ;

streamDecl : STREAM ident '=' pipeline ;

pipeline : pipeHead ('|' pipeOp)* ;
pipeHead
  : source        # sourceHead
  | ident         # streamHead
  ;

source : FROM connector sourceClause* ;
sourceClause
  : formatClause                                          # sourceFormat
  | AS ident                                              # sourceSchema
  | EVENT TIME expr WATERMARK durationRef (IDLE durationRef)?  # sourceEventTime
  | ON ERROR errorPolicy                                  # sourceOnError
  ;
errorPolicy
  : FAIL                                       # errorFail
  | SKIP_                                      # errorSkip
  | DEAD_LETTER connector formatClause?        # errorDeadLetter
  ;

// The parentheses may be left out when there are no arguments: `into stdout`.
connector : ident ('(' (namedArg (',' namedArg)* ','?)? ')')? ;
namedArg : ident ':' expr ;
formatClause : FORMAT ident ('(' (namedArg (',' namedArg)* ','?)? ')')? ;

// A duration literal or the name of a duration param.
durationRef
  : DURATION   # durationLiteral
  | ident      # durationParam
  ;

pipeOp
  : WHERE expr                                           # whereOp
  | KEY BY expr (',' expr)*                              # keyByOp
  | WINDOW windowSpec lateRoute?                          # windowOp
  | AGGREGATE namedExpr (',' namedExpr)*                 # aggregateOp
  | SELECT selectItem (',' selectItem)*                  # selectOp
  | EXPLODE expr AS ident                                # explodeOp
  | UNION ident (',' ident)*                             # unionOp
  | JOIN ident ON expr joinBound                         # joinOp
  | INTO connector formatClause? delivery?               # intoOp
  ;

windowSpec : windowShape (ZONE zoneRef)? (LATENESS durationRef)? (PROCESSING TIME)? ;
// The IANA time zone a window aligns to: a string literal or the name of a string param.
zoneRef
  : STRING   # zoneLiteral
  | ident    # zoneParam
  ;
// Where a window's late records go instead of being dropped: `on late into ...` (not part of
// windowSpec: join windows have no such clause). `late` is a name checked when building the AST,
// not a keyword, so it stays free for fields and streams.
lateRoute : ON ident INTO connector formatClause? delivery? ;
windowShape
  : TUMBLING durationRef                       # tumblingWindow
  | SLIDING durationRef EVERY durationRef      # slidingWindow
  | SESSION durationRef                        # sessionWindow
  ;
joinBound
  : WITHIN durationRef     # intervalBound
  | WINDOW windowSpec      # windowBound
  ;
delivery : EXACTLY_ONCE | AT_LEAST_ONCE ;

namedExpr : expr (AS ident)? ;
selectItem
  : '*'               # selectStar
  | expr (AS ident)?  # selectExpr
  ;

// Precedence from tightest to loosest, as in SQL: postfix, unary minus, * / %, + -, comparison,
// in / is null, not, and, or.
expr
  : primary                                               # primaryExpr
  | expr '.' ident                                        # fieldExpr
  | expr '[' expr ']'                                     # indexExpr
  | '-' expr                                              # negExpr
  | expr op=('*' | '/' | '%') expr                        # mulExpr
  | expr op=('+' | '-') expr                              # addExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr  # cmpExpr
  | expr NOT? IN '(' expr (',' expr)* ')'                 # inExpr
  | expr IS NOT? NULL_                                     # isNullExpr
  | NOT expr                                              # notExpr
  | expr AND expr                                         # andExpr
  | expr OR expr                                          # orExpr
  ;

primary
  : INT                                             # intLit
  | FLOAT                                           # floatLit
  | STRING                                          # stringLit
  | DURATION                                        # durationLit
  | TRUE                                            # trueLit
  | FALSE                                           # falseLit
  | NULL_                                            # nullLit
  | TIMESTAMP STRING                                # timestampLit
  | CAST '(' expr AS typeRef ')'                    # castExpr
  | CASE (WHEN expr THEN expr)+ (ELSE expr)? END    # caseExpr
  | ident '(' (callArg (',' callArg)*)? ')'         # callExpr
  | '[' (expr (',' expr)*)? ']'                     # listLit
  | ident                                           # nameExpr
  | '(' expr ')'                                    # parenExpr
  ;
callArg : '*' | expr ;

ident
  : IDENT | TIME | KEY | EVENT | ERROR | FAIL | SKIP_ | SESSION | TUMBLING | SLIDING | EVERY
  | LATENESS | PROCESSING | WATERMARK | IDLE | FORMAT | WITHIN | TIMESTAMP | DEAD_LETTER | ZONE
  ;

// Keywords.
PARAM : 'param' ;
SCHEMA : 'schema' ;
STREAM : 'stream' ;
EXTERN : 'extern' ;
FN : 'fn' ;
FROM : 'from' ;
FORMAT : 'format' ;
AS : 'as' ;
EVENT : 'event' ;
TIME : 'time' ;
WATERMARK : 'watermark' ;
IDLE : 'idle' ;
ON : 'on' ;
ERROR : 'error' ;
FAIL : 'fail' ;
SKIP_ : 'skip' ;
DEAD_LETTER : 'dead_letter' ;
WHERE : 'where' ;
KEY : 'key' ;
BY : 'by' ;
WINDOW : 'window' ;
TUMBLING : 'tumbling' ;
SLIDING : 'sliding' ;
SESSION : 'session' ;
EVERY : 'every' ;
LATENESS : 'lateness' ;
PROCESSING : 'processing' ;
ZONE : 'zone' ;
AGGREGATE : 'aggregate' ;
SELECT : 'select' ;
EXPLODE : 'explode' ;
UNION : 'union' ;
JOIN : 'join' ;
WITHIN : 'within' ;
INTO : 'into' ;
EXACTLY_ONCE : 'exactly_once' ;
AT_LEAST_ONCE : 'at_least_once' ;
AND : 'and' ;
OR : 'or' ;
NOT : 'not' ;
IN : 'in' ;
IS : 'is' ;
NULL_ : 'null' ;
TRUE : 'true' ;
FALSE : 'false' ;
CASE : 'case' ;
WHEN : 'when' ;
THEN : 'then' ;
ELSE : 'else' ;
END : 'end' ;
CAST : 'cast' ;
TIMESTAMP : 'timestamp' ;

QUESTION : '?' ;

// `5s`, `250ms`, `1m`, `2h`, `1d`. Must come before INT so the longest match wins as a unit.
DURATION : DIGIT+ ('ms' | 's' | 'm' | 'h' | 'd') ;
FLOAT : DIGIT+ '.' DIGIT+ ([eE] [+-]? DIGIT+)? | DIGIT+ [eE] [+-]? DIGIT+ ;
INT : DIGIT+ ;
// Escapes are validated when building the AST so a bad one gets a precise message.
STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* '"' ;
IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;

LINE_COMMENT : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS : [ \t\r\n]+ -> skip ;

// Unterminated strings and comments go to the hidden channel; compiler/parse/ reports them with a
// precise message instead of a generic "unexpected token".
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' ~[\r\n])* -> channel(HIDDEN) ;
// Cannot contain `*/`, so it only wins (longest match) when the comment is really unterminated.
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'* EOF -> channel(HIDDEN) ;

fragment DIGIT : [0-9] ;

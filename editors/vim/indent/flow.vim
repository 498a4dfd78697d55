" Indentation for Flow (.flow) scripts: pipeline steps (`| ...`) and source clauses (`format`,
" `event time`, `on error`, ...) continue a statement one shiftwidth in; a line ending in `,`
" continues a list; schema fields sit one shiftwidth inside `{ }`.
if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal indentexpr=GetFlowIndent(v:lnum)
setlocal indentkeys=0{,0},0),0],!^F,o,O,e,0=\|
setlocal autoindent

let b:undo_indent = 'setlocal indentexpr< indentkeys< autoindent<'

if exists('*GetFlowIndent')
  finish
endif

let s:clause = '^\s*\%(|\|format\>\|as\>\|event\>\|on\>\)'

" The text of line `lnum` without a trailing // comment.
function! s:Code(lnum) abort
  return substitute(getline(a:lnum), '\s*//.*$', '', '')
endfunction

function! s:PrevCode(lnum) abort
  let l = prevnonblank(a:lnum - 1)
  while l > 0 && getline(l) =~# '^\s*\%(//\|/\*\|\*\)'
    let l = prevnonblank(l - 1)
  endwhile
  return l
endfunction

" The first line of the statement that line `lnum` belongs to.
function! s:StatementStart(lnum) abort
  let l = a:lnum
  while l > 1
    let p = s:PrevCode(l)
    if p == 0
      break
    endif
    if getline(l) =~# s:clause || s:Code(p) =~# '[,(\[{]\s*$' || s:Code(p) =~# '\%(=\|->\)\s*$'
      let l = p
    else
      break
    endif
  endwhile
  return l
endfunction

function! GetFlowIndent(lnum) abort
  let line = getline(a:lnum)
  let p = s:PrevCode(a:lnum)
  if p == 0
    return 0
  endif
  let prev = s:Code(p)

  " Inside a block comment keep what the user typed.
  if synIDattr(synID(a:lnum, 1, 1), 'name') ==# 'flowBlockComment' && line !~# '^\s*/\*'
    return -1
  endif

  " A closing bracket lines up with the line that opened it.
  if line =~# '^\s*[}\])]'
    call cursor(a:lnum, 1)
    let open = searchpair('[{[(]', '', '[}\])]', 'bW',
          \ 'synIDattr(synID(line("."), col("."), 1), "name") =~? "string\\|comment"')
    return open > 0 ? indent(open) : indent(p)
  endif

  " After an opening bracket at the end of a line: one level in.
  if prev =~# '[{[(]\s*$'
    return indent(p) + shiftwidth()
  endif

  " A pipeline step or source clause: one level in from the start of its statement.
  if line =~# s:clause
    if prev =~# '^\s*|'
      return indent(p)
    endif
    return indent(s:StatementStart(p)) + shiftwidth()
  endif

  " A continued list (`| select a, b,` then more items): one level in from the step's keyword.
  if prev =~# ',\s*$'
    if prev =~# '^\s*|'
      return matchend(prev, '^\s*|\s*') + shiftwidth()
    endif
    return indent(p)
  endif

  " A line after `=` or `->` at the end of a line continues it.
  if prev =~# '\%(=\|->\)\s*$'
    return indent(p) + shiftwidth()
  endif

  " Otherwise a new statement: line up with the start of the previous one.
  return indent(s:StatementStart(p))
endfunction

" Runs inside `vim -Nu NONE -es`: loads editors/vim, checks the syntax group at the positions
" listed in $FLOW_VIM_CASES (JSON written by vim.test.js) and the indentation of
" the first file in $FLOW_VIM_INDENT (newline-separated) and of the pipeline steps of the others,
" and writes one line per failure to $FLOW_VIM_OUT.
set nocompatible
let s:editors = fnamemodify(expand('<sfile>:p'), ':h:h:h')
let &runtimepath = s:editors . '/vim,' . &runtimepath
filetype plugin indent on
syntax on

let s:failures = []
let s:checks = 0

function! s:GroupAt(lnum, col) abort
  return synIDattr(synID(a:lnum, a:col, 1), 'name')
endfunction

" Each case: {file?, lines?, line, col (1-based), len, groups (accepted), not (refused), what}.
function! s:RunCases(cases) abort
  let loaded = ''
  for c in a:cases
    if has_key(c, 'file')
      if loaded !=# c.file
        execute 'silent edit! ' . fnameescape(c.file)
        let loaded = c.file
        if &filetype !=# 'flow'
          call add(s:failures, c.file . ': filetype is "' . &filetype . '", not flow')
        endif
      endif
    else
      silent enew!
      setfiletype flow
      call setline(1, c.lines)
      let loaded = ''
    endif
    for col in range(c.col, c.col + c.len - 1)
      let s:checks += 1
      let g = s:GroupAt(c.line, col)
      if (!empty(c.groups) && index(c.groups, g) < 0) || index(c.not, g) >= 0
        call add(s:failures, printf('[%s] %s: line %d col %d: group "%s", expected %s%s', bufname('%'),
              \ c.what, c.line, col, g, string(c.groups), empty(c.not) ? '' : ' not ' . string(c.not)))
        break
      endif
    endfor
  endfor
endfunction

" Strips all indentation, re-indents with gg=G and compares; with `pipes_only`, only the lines
" that are pipeline steps (`| ...`).
function! s:CheckIndent(file, pipes_only) abort
  execute 'silent edit! ' . fnameescape(a:file)
  let want = getline(1, '$')
  silent %s/^\s\+//e
  silent normal! gg=G
  let got = getline(1, '$')
  for i in range(len(want))
    if a:pipes_only && want[i] !~# '^\s*|'
      continue
    endif
    let s:checks += 1
    if want[i] !=# got[i]
      call add(s:failures, printf('indent: %s line %d: got "%s", expected "%s"', a:file, i + 1, got[i], want[i]))
    endif
  endfor
endfunction

function! s:CheckSettings() abort
  silent enew!
  setfiletype flow
  for [name, want] in [['&commentstring', '// %s'], ['&shiftwidth', 2], ['&expandtab', 1],
        \ ['&indentexpr', 'GetFlowIndent(v:lnum)']]
    let s:checks += 1
    if eval(name) !=# want
      call add(s:failures, printf('ftplugin: %s is "%s", expected "%s"', name, eval(name), want))
    endif
  endfor
  let s:checks += 1
  if &comments !~# '://'
    call add(s:failures, 'ftplugin: comments lacks //')
  endif
endfunction

try
  call s:RunCases(json_decode(join(readfile($FLOW_VIM_CASES), "\n")))
  if $FLOW_VIM_INDENT !=# ''
    let files = split($FLOW_VIM_INDENT, "\n")
    for i in range(len(files))
      call s:CheckIndent(files[i], i > 0)
    endfor
    call s:CheckSettings()
  endif
catch
  call add(s:failures, 'exception: ' . v:exception . ' at ' . v:throwpoint)
endtry
call writefile(['checks ' . s:checks] + s:failures, $FLOW_VIM_OUT)
qall!

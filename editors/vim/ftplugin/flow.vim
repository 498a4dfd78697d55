" Filetype settings for Flow (.flow) scripts.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal commentstring=//\ %s
setlocal comments=s1:/*,mb:*,ex:*/,://
setlocal formatoptions-=t formatoptions+=croql
setlocal shiftwidth=2 softtabstop=2 expandtab
setlocal iskeyword=@,48-57,_,192-255
setlocal suffixesadd=.flow

let b:undo_ftplugin = 'setlocal commentstring< comments< formatoptions< shiftwidth< softtabstop<'
      \ . ' expandtab< iskeyword< suffixesadd<'

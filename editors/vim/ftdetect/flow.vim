" Flow streaming dataflow scripts.
autocmd BufNewFile,BufRead *.flow setfiletype flow

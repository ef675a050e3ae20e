-- Commands and buffer names of the alp plugin (Neovim >= 0.7).
if vim.g.loaded_alp then
  return
end
vim.g.loaded_alp = true

local group = vim.api.nvim_create_augroup("alp", { clear = true })
vim.api.nvim_create_autocmd("BufReadCmd", {
  group = group,
  pattern = "alp://*",
  callback = function(args)
    require("alp").read(args.buf)
  end,
})

vim.api.nvim_create_user_command("AlpThreads", function()
  require("alp").threads()
end, { desc = "alp: threads of this workspace" })
vim.api.nvim_create_user_command("AlpShow", function(opts)
  require("alp").show(opts.args)
end, { nargs = "?", desc = "alp: a thread's roots, context and gist" })
vim.api.nvim_create_user_command("AlpSearch", function(opts)
  require("alp").search_command(opts.args)
end, { nargs = "+", desc = "alp: search history (quickfix): [--mode hybrid|keyword|meaning] QUERY" })
vim.api.nvim_create_user_command("AlpContinue", function(opts)
  require("alp").continue(opts.fargs[1], vim.list_slice(opts.fargs, 2))
end, { nargs = "+", desc = "alp: continue a thread in a terminal split" })

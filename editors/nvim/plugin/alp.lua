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
vim.api.nvim_create_user_command("AlpLog", function(opts)
  require("alp").log(opts.args)
end, { nargs = "?", desc = "alp: a thread's transcript (o: older items; new ones as they are written)" })
vim.api.nvim_create_user_command("AlpMemory", function()
  require("alp").memory_list()
end, { desc = "alp: memories of this workspace and the global ones" })
vim.api.nvim_create_user_command("AlpMemoryAdd", function(opts)
  require("alp").memory_add(opts.args)
end, { nargs = "*", desc = "alp: remember [--scope workspace|global] [--kind K] TEXT" })
vim.api.nvim_create_user_command("AlpMemoryPromote", function(opts)
  require("alp").memory_promote(opts.fargs[1], opts.fargs[2], opts.fargs[3])
end, { nargs = "+", desc = "alp: a thread's pinned line becomes a memory: THREAD PIN [global]" })
vim.api.nvim_create_user_command("AlpMemoryReview", function()
  require("alp").memory_review()
end, { desc = "alp: memories not confirmed for 90 days, or citing a changed file" })
vim.api.nvim_create_user_command("AlpDiff", function(opts)
  require("alp").diff(opts.fargs[1], opts.fargs[2])
end, { nargs = "*", desc = "alp: what a root changed in the files: [THREAD] [ROOT]" })
vim.api.nvim_create_user_command("AlpRestore", function(opts)
  require("alp").restore(opts.fargs[1], tonumber(opts.fargs[2]), opts.bang)
end, { nargs = "+", bang = true, desc = "alp: put the files back to before a root: THREAD ROOT (! forces)" })
vim.api.nvim_create_user_command("AlpUndoFiles", function(opts)
  require("alp").restore(opts.fargs[1], nil, opts.bang)
end, { nargs = 1, bang = true, desc = "alp: undo the last step's files (a restore included): THREAD" })

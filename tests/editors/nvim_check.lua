-- Drives the alp Neovim plugin in `nvim --headless` against a real alpd and writes what it
-- saw to $ALP_NVIM_REPORT (JSON). The live step waits for $ALP_NVIM_READY to be written by
-- the plugin and then for the Python side to create a thread, which must appear by itself.
local report = {}
local function save()
  local f = assert(io.open(os.getenv("ALP_NVIM_REPORT"), "w"))
  f:write(vim.json.encode(report))
  f:close()
end

local ok, err = pcall(function()
  local alp = require("alp")
  local rpc = require("alp.rpc")
  report.socket_path = rpc.socket_path()
  report.rules = {
    xdg = rpc.socket_path(function(k) return ({ XDG_RUNTIME_DIR = "/run/user/7" })[k] end),
    relative_xdg = rpc.socket_path(function(k) return ({ XDG_RUNTIME_DIR = "run" })[k] end),
    empty_socket = rpc.socket_path(function(k) return ({ ALP_SOCKET = "", XDG_RUNTIME_DIR = "/x" })[k] end),
  }

  -- list
  local list_buf = alp.threads()
  report.list = vim.api.nvim_buf_get_lines(list_buf, 0, -1, false)

  -- show (the first thread, through the list's <CR>)
  for i, line in ipairs(report.list) do
    if line:find("planning the ledger", 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
    end
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
  report.show_name = vim.api.nvim_buf_get_name(0)
  report.show = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  -- search → quickfix, and a quickfix entry opens the thread view
  alp.search("ledger")
  report.quickfix = vim.tbl_map(function(item)
    return { text = item.text, name = vim.api.nvim_buf_get_name(item.bufnr) }
  end, vim.fn.getqflist())
  vim.cmd("cfirst")
  report.qf_opened = vim.api.nvim_buf_get_name(0)
  -- the modes: keyword by name; hybrid says the meaning index is off; meaning is refused
  local keyword = alp.search_command("--mode keyword ledger")
  report.keyword_noticed = keyword.notice ~= nil
  report.keyword_title = vim.fn.getqflist({ title = 1 }).title
  report.hybrid_notice = alp.search("ledger").notice
  report.meaning_refused = alp.search_command("--mode=meaning ledger") == nil
  report.bad_mode_refused = alp.search_command("--mode fuzzy ledger") == nil

  -- live: the list redraws itself when a thread appears
  alp.threads()
  local f = assert(io.open(os.getenv("ALP_NVIM_READY"), "w"))
  f:write("ready")
  f:close()
  report.live = vim.wait(60000, function()
    local lines = vim.api.nvim_buf_get_lines(list_buf, 0, -1, false)
    return table.concat(lines, "\n"):find("made while watching", 1, true) ~= nil
  end, 20)
  report.live_list = vim.api.nvim_buf_get_lines(list_buf, 0, -1, false)
  report.last_event = alp.last_event and alp.last_event.method or nil
end)
report.ok, report.error = ok, err and tostring(err) or nil
save()
vim.cmd("qa!")

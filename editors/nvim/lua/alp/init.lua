-- alp in Neovim: threads of this workspace, a thread view, history search in the quickfix
-- list, continuing a thread in a terminal split, and live updates (events/subscribe).
--
-- Buffers are named alp://threads and alp://thread/<id>; opening either name (from the
-- quickfix list, :edit, a session) renders it. Every view is read-only and redrawn from the
-- daemon; nothing is cached beyond the buffer text.
local rpc = require("alp.rpc")
local render = require("alp.render")

local M = {}

M.config = {
  --- the `alp` command (continue runs `alp thread continue ID` in a terminal)
  alp_command = "alp",
  --- the socket (nil: $ALP_SOCKET, else the runtime dir, as the CLI)
  socket = nil,
}

local state = { client = nil, events = nil }

local function notify_error(message)
  vim.notify("alp: " .. message, vim.log.levels.ERROR)
end

local function client()
  if state.client and not state.client.closed then
    return state.client
  end
  local c, err = rpc.connect(M.config.socket)
  if not c then
    notify_error(err)
    return nil
  end
  state.client = c
  return c
end

--- A request that waits for its reply; nil (and a message shown) on any error.
function M.call(method, params)
  local c = client()
  if not c then
    return nil
  end
  local result, err = c:request_sync(method, params)
  if err then
    notify_error(rpc.describe(err))
    return nil
  end
  return result
end

local function fill(buf, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  vim.api.nvim_buf_set_option(buf, "modified", false)
end

local function scratch(buf)
  vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(buf, "swapfile", false)
  vim.api.nvim_buf_set_option(buf, "filetype", "alp")
end

local function open_named(name)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    vim.cmd("edit " .. vim.fn.fnameescape(name))
  else
    vim.api.nvim_set_current_buf(buf)
    M.refresh(buf)
  end
  return vim.api.nvim_get_current_buf()
end

local function thread_under_cursor(buf)
  local ids = vim.b[buf].alp_ids or {}
  local id = ids[vim.api.nvim_win_get_cursor(0)[1]]
  return id ~= false and id or nil
end

--- Render the alp:// buffer `buf` from the daemon.
function M.refresh(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name:match("^alp://threads$") then
    local workspace = vim.b[buf].alp_workspace or vim.fn.getcwd()
    local result = M.call("thread/list", { cwd = workspace })
    if result then
      local lines, ids = render.thread_list(result.threads, workspace)
      vim.b[buf].alp_workspace = workspace
      vim.b[buf].alp_ids = ids
      fill(buf, lines)
    end
  else
    local id = name:match("^alp://thread/(.+)$")
    local result = id and M.call("thread/show", { threadId = id })
    if result then
      vim.b[buf].alp_thread = id
      fill(buf, render.thread_view(result))
    end
  end
end

--- Called for alp://… buffers being read (BufReadCmd).
function M.read(buf)
  scratch(buf)
  local opts = { buffer = buf, silent = true, nowait = true }
  vim.keymap.set("n", "r", function()
    M.refresh(buf)
  end, opts)
  vim.keymap.set("n", "c", function()
    local id = vim.b[buf].alp_thread or thread_under_cursor(buf)
    if id then
      M.continue(id)
    end
  end, opts)
  vim.keymap.set("n", "<CR>", function()
    local id = thread_under_cursor(buf)
    if id then
      M.show(id)
    end
  end, opts)
  M.refresh(buf)
  M.follow()
end

--- The threads of the current workspace (the git toplevel of the cwd, as the CLI).
function M.threads()
  return open_named("alp://threads")
end

function M.show(id)
  if not id or id == "" then
    id = vim.env.ALP_THREAD_ID
  end
  if not id or id == "" then
    notify_error("which thread? :AlpShow ID")
    return nil
  end
  return open_named("alp://thread/" .. id)
end

--- Full-text search across your threads' history; hits go to the quickfix list.
function M.search(query)
  local result = M.call("history/search", { query = query, limit = 100 })
  if not result then
    return nil
  end
  vim.fn.setqflist({}, " ", { title = "alp search: " .. query, items = render.search_items(result) })
  if #result.hits > 0 then
    vim.cmd("copen")
  else
    vim.notify("alp: no matches for " .. query)
  end
  return result
end

--- Continue a thread interactively in a terminal split (`alp thread continue ID`).
function M.continue(id, extra)
  vim.cmd("botright split")
  vim.cmd("enew")
  local argv = { M.config.alp_command, "thread", "continue", id }
  vim.list_extend(argv, extra or {})
  local env = M.config.socket and { ALP_SOCKET = M.config.socket } or nil
  local job = vim.fn.termopen(argv, { env = env })
  vim.cmd("startinsert")
  return job
end

local function on_event(method, params)
  local thread = type(params) == "table" and (params.thread or params.execution) or nil
  local thread_id = thread and (thread.threadId ~= vim.NIL and thread.threadId or thread.id) or nil
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      if name == "alp://threads" or (thread_id and name == "alp://thread/" .. thread_id) then
        M.refresh(buf)
      end
    end
  end
  M.last_event = { method = method, params = params }
  vim.api.nvim_exec_autocmds("User", { pattern = "AlpEvent", modeline = false })
end

--- Follow live changes: one subscribed connection refreshes open alp buffers and fires
--- `User AlpEvent` for your own autocommands (`require("alp").last_event` holds the
--- notification's {method, params}).
function M.follow()
  if state.events and not state.events.closed then
    return state.events
  end
  local c, err = rpc.connect(M.config.socket, { on_notification = on_event })
  if not c then
    notify_error(err)
    return nil
  end
  local result, failure = c:request_sync("events/subscribe", {
    events = { "thread/changed", "execution/changed" },
  })
  if failure then
    notify_error(rpc.describe(failure))
    c:close()
    return nil
  end
  state.events = c
  return c, result
end

function M.setup(opts)
  M.config = vim.tbl_extend("force", M.config, opts or {})
end

return M

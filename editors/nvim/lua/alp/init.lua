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
  --- :AlpSearch's mode when none is given: "hybrid", "keyword", "meaning" (nil: hybrid)
  search_mode = nil,
}

local state = {
  client = nil,
  --- the subscribed connection of live updates, and its reconnection after a loss
  events = nil,
  following = false,
  lost = nil, -- why the link went away, while it is away
  retry_ms = nil,
  retry_timer = nil,
  --- the last error a background refresh reported (reported once, not at every event)
  background_error = nil,
}

--- Back-off of the live link's reconnection: the first try after RETRY_FIRST_MS, then twice
--- as long after each failure, never longer than RETRY_MAX_MS.
M.RETRY_FIRST_MS = 200
M.RETRY_MAX_MS = 10000

local function notify_error(message)
  vim.notify("alp: " .. message, vim.log.levels.ERROR)
end

--- An error of work nobody asked for just now (a refresh after an event): shown once, not
--- again while the same error repeats, so live updates never keep interrupting editing.
local function notify_background(message)
  if state.background_error == message then
    return
  end
  state.background_error = message
  vim.notify("alp: " .. message, vim.log.levels.WARN)
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

--- A request that waits for its reply; nil (and a message shown, through `report` when
--- given) on any error.
function M.call(method, params, report)
  report = report or notify_error
  local c = client()
  if not c then
    return nil
  end
  local result, err = c:request_sync(method, params)
  if err then
    report(rpc.describe(err))
    return nil
  end
  return result
end

local function fill(buf, lines)
  -- a buffer line cannot hold a line break: render keeps them out, and this makes sure
  local flat = {}
  for _, line in ipairs(lines) do
    vim.list_extend(flat, render.lines(line))
  end
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, flat)
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

--- Render the alp:// buffer `buf` from the daemon. `opts.background`: nobody asked for this
--- refresh just now (a live update), so an error is reported once, not at every event.
function M.refresh(buf, opts)
  local report = opts and opts.background and notify_background or nil
  local name = vim.api.nvim_buf_get_name(buf)
  local result
  if name:match("^alp://threads$") then
    local workspace = vim.b[buf].alp_workspace or vim.fn.getcwd()
    result = M.call("thread/list", { cwd = workspace }, report)
    if result then
      local lines, ids = render.thread_list(result.threads, workspace)
      vim.b[buf].alp_workspace = workspace
      vim.b[buf].alp_ids = ids
      fill(buf, lines)
    end
  else
    local id = name:match("^alp://thread/(.+)$")
    result = id and M.call("thread/show", { threadId = id }, report)
    if result then
      vim.b[buf].alp_thread = id
      fill(buf, render.thread_view(result))
    end
  end
  if report and result then
    state.background_error = nil -- working again: the next failure is news
  end
  return result ~= nil
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

--- Search across your threads' history; hits go to the quickfix list. `mode`: "hybrid"
--- (by keyword and by meaning, fused), "keyword" or "meaning"; nil: `config.search_mode`,
--- else the daemon's default (hybrid). When the meaning index cannot answer, hybrid answers
--- by keyword and the daemon's notice is shown; "meaning" is then an error.
--- a JSON null (vim.NIL) as nil
local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

function M.search(query, mode)
  local params = { query = query, limit = 100 }
  params.mode = mode or M.config.search_mode
  local result = M.call("history/search", params)
  if not result then
    return nil
  end
  local title = ("alp search (%s): %s"):format(value(result.mode) or "keyword", query)
  vim.fn.setqflist({}, " ", { title = title, items = render.search_items(result) })
  if value(result.notice) then
    vim.notify("alp: " .. result.notice, vim.log.levels.WARN)
  end
  if #result.hits > 0 then
    vim.cmd("copen")
  else
    vim.notify("alp: no matches for " .. query)
  end
  return result
end

--- `:AlpSearch [--mode hybrid|keyword|meaning] QUERY` (also `--mode=M`).
function M.search_command(args)
  local mode, rest = args:match("^%-%-mode[= ](%a+)%s+(.+)$")
  if mode and not ({ hybrid = true, keyword = true, meaning = true })[mode] then
    notify_error(("--mode is hybrid, keyword or meaning, not %s"):format(mode))
    return nil
  end
  return M.search(rest or args, mode)
end

--- Continue a thread interactively in a terminal split (`alp thread continue ID`).
function M.continue(id, extra)
  if not id or id == "" then
    notify_error("which thread? :AlpContinue ID [RUNTIME_ARGS…]")
    return nil
  end
  vim.cmd("botright split")
  vim.cmd("enew")
  local argv = { M.config.alp_command, "thread", "continue", id }
  vim.list_extend(argv, extra or {})
  -- termopen wants a dictionary: an empty Lua table would reach it as a list (E475)
  local opts = vim.empty_dict()
  if M.config.socket then
    opts.env = { ALP_SOCKET = M.config.socket }
  end
  local job = vim.fn.termopen(argv, opts)
  if job <= 0 then
    notify_error(("cannot run %s (is it on PATH? set alp_command in setup())"):format(M.config.alp_command))
    return nil
  end
  vim.cmd("startinsert")
  return job
end

--- Redraw every open alp buffer (`thread_id`: only the list and that thread's view).
local function refresh_open(thread_id)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      local wanted = name == "alp://threads"
        or (name:match("^alp://thread/") and (thread_id == nil or name == "alp://thread/" .. thread_id))
      if wanted then
        -- whatever goes wrong is reported once (not at every event) and never raised into
        -- the editor from a live update
        local ok, err = pcall(M.refresh, buf, { background = true })
        if not ok then
          notify_background(tostring(err))
        end
      end
    end
  end
end

local function on_event(method, params)
  local thread = type(params) == "table" and (params.thread or params.execution) or nil
  local thread_id = nil
  if type(thread) == "table" then
    local id = thread.threadId ~= nil and thread.threadId ~= vim.NIL and thread.threadId or thread.id
    thread_id = type(id) == "string" and id or nil
  end
  -- an event with no thread (a legacy run) changes only the list
  refresh_open(thread_id or "")
  M.last_event = { method = method, params = params }
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AlpEvent", modeline = false })
end

local schedule_reconnect

local function subscribe(c, done)
  c:request("events/subscribe", { events = { "thread/changed", "execution/changed" } }, function(err, result)
    if err then
      c.on_close = nil
      c:close()
      done(nil, rpc.describe(err))
    else
      done(c, nil, result)
    end
  end)
end

--- The link went away (the daemon stopped or restarted): say so once, then reconnect with
--- back-off until it answers again.
local function on_events_closed(c, reason)
  if state.events ~= c then
    return
  end
  state.events = nil
  if not state.following then
    return
  end
  if not state.lost then
    state.lost = tostring(reason)
    vim.notify(
      ("alp: lost the daemon (%s); live updates paused, reconnecting in the background"):format(state.lost),
      vim.log.levels.WARN
    )
  end
  schedule_reconnect()
end

local function events_options()
  local opts = { on_notification = on_event }
  opts.on_close = function(reason, c)
    on_events_closed(c, reason)
  end
  return opts
end

local function try_reconnect()
  state.retry_timer = nil
  if not state.following or state.events then
    return
  end
  rpc.connect_async(M.config.socket, events_options(), function(c, err)
    if not c then
      return schedule_reconnect(err)
    end
    state.events = c
    subscribe(c, function(ok)
      if not ok then
        state.events = nil
        return schedule_reconnect()
      end
      state.retry_ms = nil
      if state.lost then
        state.lost = nil
        vim.notify("alp: reconnected to the daemon; live updates resumed", vim.log.levels.INFO)
      end
      -- what changed while the link was down came with no event: redraw from the daemon
      refresh_open(nil)
      pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AlpReconnected", modeline = false })
    end)
  end)
end

schedule_reconnect = function()
  if state.retry_timer or not state.following then
    return
  end
  local delay = state.retry_ms or M.RETRY_FIRST_MS
  state.retry_ms = math.min(delay * 2, M.RETRY_MAX_MS)
  local timer = vim.loop.new_timer()
  state.retry_timer = timer
  timer:start(delay, 0, function()
    timer:close()
    vim.schedule(try_reconnect)
  end)
end

--- Follow live changes: one subscribed connection refreshes open alp buffers and fires
--- `User AlpEvent` for your own autocommands (`require("alp").last_event` holds the
--- notification's {method, params}). Should the daemon go away (a restart), the plugin
--- says so once and reconnects with back-off, resubscribes, redraws the open buffers and
--- fires `User AlpReconnected`.
function M.follow()
  if state.events and not state.events.closed then
    return state.events
  end
  state.following = true
  if state.lost or state.retry_timer then
    return nil -- reconnecting already
  end
  local c, err = rpc.connect(M.config.socket, events_options())
  if not c then
    notify_error(err)
    return nil
  end
  state.events = c
  local result, failure = c:request_sync("events/subscribe", {
    events = { "thread/changed", "execution/changed" },
  })
  if failure then
    notify_error(rpc.describe(failure))
    state.events = nil
    c.on_close = nil
    c:close()
    return nil
  end
  return c, result
end

--- Stop following live changes (and any reconnection in progress).
function M.unfollow()
  state.following = false
  state.lost = nil
  state.retry_ms = nil
  if state.retry_timer then
    local timer = state.retry_timer
    state.retry_timer = nil
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
  if state.events then
    local c = state.events
    state.events = nil
    c:close()
  end
end

--- Whether live updates flow now (for tests and statuslines).
function M.following()
  return state.events ~= nil and not state.events.closed
end

function M.setup(opts)
  M.config = vim.tbl_extend("force", M.config, opts or {})
end

return M

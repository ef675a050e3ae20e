-- alp in Neovim: threads of this workspace, a thread view, history search in the quickfix
-- list, continuing a thread in a terminal split, and live updates (events/subscribe).
--
-- Buffers are named alp://threads, alp://thread/<id>, alp://log/<id> (the transcript),
-- alp://memory, alp://memory/<id>, alp://memory-review and alp://diff/<thread>[/<N>];
-- opening a name (from the quickfix list, :edit, a session) renders it. Every view is
-- read-only and redrawn from the daemon; nothing is cached beyond the buffer text (and a
-- transcript's pages read so far).
local rpc = require("alp.rpc")
local render = require("alp.render")
local transcript = require("alp.transcript")
local memory = require("alp.memory")
local diff = require("alp.diff")

local M = {}

M.config = {
  --- the `alp` command (continue runs `alp thread continue ID` in a terminal)
  alp_command = "alp",
  --- the socket (nil: $ALP_SOCKET, else the runtime dir, as the CLI)
  socket = nil,
  --- :AlpSearch's mode when none is given: "hybrid", "keyword", "meaning" (nil: hybrid)
  search_mode = nil,
  --- the memory review lists memories not confirmed for this many days
  memory_review_days = 90,
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

--- a JSON null (vim.NIL) as nil
local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
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

--- The transcript views' state, by buffer (alp://log/<thread>).
local logs = {}

--- Whether the window shows the last line of `buf` (a transcript then follows its end).
local function at_end(buf)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    return false, nil
  end
  return vim.api.nvim_win_get_cursor(win)[1] >= vim.api.nvim_buf_line_count(buf), win
end

local function draw_log(buf)
  local view = logs[buf]
  local follow, win = at_end(buf)
  local keep = win ~= -1 and win and vim.api.nvim_win_get_cursor(win)
  local before = vim.api.nvim_buf_line_count(buf)
  fill(buf, transcript.view_lines(view))
  if win then
    local count = vim.api.nvim_buf_line_count(buf)
    if follow then
      vim.api.nvim_win_set_cursor(win, { count, 0 })
    elseif keep and view.shifted then
      -- older items went on top: stay on the same item
      vim.api.nvim_win_set_cursor(win, { math.min(keep[1] + count - before, count), 0 })
    end
  end
  view.shifted = false
end

--- Read what follows the transcript's last page (at most CATCH_UP_PAGES pages).
local function catch_up(buf, report)
  local view = logs[buf]
  if not view.next then
    return M.refresh(buf, { background = report ~= nil })
  end
  for _ = 1, transcript.CATCH_UP_PAGES do
    local page = M.call("thread/transcript", { threadId = view.thread, after = view.next, limit = transcript.PAGE, full = view.full }, report)
    if not page then
      return false
    end
    if not transcript.take_newer(view, page) then
      break
    end
  end
  draw_log(buf)
  return true
end

--- The older page of a transcript, above what it shows.
function M.log_older(buf)
  local view = logs[buf or vim.api.nvim_get_current_buf()]
  if not view or not view.more_before then
    vim.notify("alp: this is the start of the thread")
    return false
  end
  buf = buf or vim.api.nvim_get_current_buf()
  local page = M.call("thread/transcript", { threadId = view.thread, before = view.previous, limit = transcript.PAGE, full = view.full })
  if not page then
    return false
  end
  transcript.take_older(view, page)
  view.shifted = true
  draw_log(buf)
  return true
end

local function refresh_log(buf, thread, report)
  logs[buf] = logs[buf] or transcript.new_view(thread)
  local view = logs[buf]
  local page = M.call("thread/transcript", { threadId = thread, limit = transcript.PAGE, full = view.full }, report)
  if not page then
    return nil
  end
  transcript.take_newest(view, page)
  vim.b[buf].alp_thread = thread
  draw_log(buf)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
  end
  return page
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
  elseif name:match("^alp://log/") then
    result = refresh_log(buf, name:match("^alp://log/(.+)$"), report)
  elseif name:match("^alp://memory$") then
    local workspace = vim.b[buf].alp_workspace or vim.fn.getcwd()
    result = M.call("memory/list", { cwd = workspace }, report)
    if result then
      local lines, ids = memory.list_lines(result, workspace)
      vim.b[buf].alp_workspace = workspace
      vim.b[buf].alp_memory_ids = ids
      fill(buf, lines)
    end
  elseif name:match("^alp://memory%-review$") then
    local workspace = vim.b[buf].alp_workspace or vim.fn.getcwd()
    result = M.call("memory/review", { cwd = workspace, days = M.config.memory_review_days }, report)
    if result then
      local lines, ids = memory.review_lines(result, M.config.memory_review_days)
      vim.b[buf].alp_workspace = workspace
      vim.b[buf].alp_memory_ids = ids
      fill(buf, lines)
    end
  elseif name:match("^alp://memory/") then
    local id = name:match("^alp://memory/(.+)$")
    result = M.call("memory/show", { id = id }, report)
    if result then
      vim.b[buf].alp_memory = id
      fill(buf, memory.show_lines(result))
    end
  elseif name:match("^alp://diff/") then
    local thread, root = name:match("^alp://diff/([^/]+)/(%d+)$")
    thread = thread or name:match("^alp://diff/([^/]+)$")
    result = thread and M.call("thread/diff", { threadId = thread, root = root and tonumber(root) or nil }, report)
    if result then
      vim.b[buf].alp_thread = thread
      vim.b[buf].alp_diff_root = value(result.root) or false
      fill(buf, diff.diff_lines(result))
    end
  else
    local id = name:match("^alp://thread/(.+)$")
    result = id and M.call("thread/show", { threadId = id }, report)
    if result then
      vim.b[buf].alp_thread = id
      local lines, pins = render.thread_view(result)
      vim.b[buf].alp_pins = pins
      fill(buf, lines)
    end
  end
  if report and result then
    state.background_error = nil -- working again: the next failure is news
  end
  return result ~= nil
end

local function memory_under_cursor(buf)
  local ids = vim.b[buf].alp_memory_ids or {}
  local id = ids[vim.api.nvim_win_get_cursor(0)[1]]
  return (id ~= false and id) or vim.b[buf].alp_memory or nil
end

--- Called for alp://… buffers being read (BufReadCmd).
function M.read(buf)
  scratch(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local opts = { buffer = buf, silent = true, nowait = true }
  local function map(key, fn)
    vim.keymap.set("n", key, fn, opts)
  end
  --- a key's handler: the action `M[action]` on the id `find` gives for the cursor's line
  local function with(find, action)
    return function()
      local id = find()
      if id then
        M[action](id)
      end
    end
  end
  local function memory()
    return memory_under_cursor(buf)
  end
  local function listed()
    return thread_under_cursor(buf)
  end
  local function thread()
    return vim.b[buf].alp_thread or thread_under_cursor(buf)
  end
  map("r", function()
    M.refresh(buf)
  end)
  if name:match("^alp://log/") then
    map("o", function()
      M.log_older(buf)
    end)
    map("F", function()
      local view = logs[buf]
      if view then
        view.full = not view.full
        M.refresh(buf)
      end
    end)
  elseif name:match("^alp://memory") then
    map("<CR>", with(memory, "memory_show"))
    map("a", function()
      M.memory_add()
    end)
    map("s", with(memory, "memory_supersede"))
    map("x", with(memory, "memory_retract"))
    map("c", with(memory, "memory_confirm"))
    map("R", function()
      M.memory_review()
    end)
  elseif name:match("^alp://diff/") then
    vim.api.nvim_buf_set_option(buf, "filetype", "diff")
    map("U", function()
      local root = vim.b[buf].alp_diff_root
      M.restore(vim.b[buf].alp_thread, root ~= false and root or nil)
    end)
  else
    map("c", with(thread, "continue"))
    map("<CR>", with(listed, "show"))
    map("l", with(thread, "log"))
    map("d", with(thread, "diff"))
    map("m", function()
      local pins = vim.b[buf].alp_pins or {}
      local pin = pins[vim.api.nvim_win_get_cursor(0)[1]]
      if vim.b[buf].alp_thread and pin then
        M.memory_promote(vim.b[buf].alp_thread, pin)
      else
        notify_error("put the cursor on a pinned line of the context to make it a memory")
      end
    end)
  end
  M.refresh(buf)
  M.follow()
end

local function ask(what)
  local answer = vim.fn.input(what)
  return answer ~= "" and answer or nil
end

local function yes(question)
  return vim.fn.confirm(question, "&Yes\n&No", 2) == 1
end

--- Redraw the open memory buffers (after an action changed a memory).
local function refresh_memory()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf):match("^alp://memory") then
      M.refresh(buf)
    end
  end
end

--- A thread's transcript (`thread/transcript`): the newest page, older ones with `o`.
function M.log(id)
  id = (id and id ~= "") and id or vim.env.ALP_THREAD_ID
  if not id or id == "" then
    notify_error("which thread? :AlpLog ID")
    return nil
  end
  return open_named("alp://log/" .. id)
end

--- The memories of this workspace and the global ones.
function M.memory_list()
  return open_named("alp://memory")
end

function M.memory_show(id)
  return open_named("alp://memory/" .. id)
end

function M.memory_review()
  return open_named("alp://memory-review")
end

--- `memory/add`: `args` as :AlpMemoryAdd takes them; none: asked for.
function M.memory_add(args)
  if not args or vim.trim(args) == "" then
    args = ask("Remember (fact of this workspace; --scope global, --kind K first): ")
    if not args then
      return nil
    end
  end
  local params, why = memory.parse_add(args)
  if not params then
    notify_error(why)
    return nil
  end
  params.cwd = vim.fn.getcwd()
  local added = M.call("memory/add", params)
  if added then
    vim.notify(("alp: remembered %s (%s, %s)"):format(added.id, added.kind, added.scope))
    refresh_memory()
  end
  return added
end

--- `memory/promote`: a pinned line of a thread (its id, or its number) becomes a memory.
function M.memory_promote(thread, pin, scope)
  local promoted = M.call("memory/promote", { thread = thread, pin = tostring(pin), scope = scope })
  if promoted then
    vim.notify(("alp: remembered %s from the pin: %s"):format(promoted.id, render.oneline(promoted.text)))
    refresh_memory()
  end
  return promoted
end

function M.memory_supersede(id, text)
  text = text or ask("New text of " .. id .. ": ")
  if not text then
    return nil
  end
  local memory_now = M.call("memory/supersede", { id = id, text = text })
  if memory_now then
    vim.notify(("alp: %s is now version %d"):format(id, memory_now.version))
    refresh_memory()
  end
  return memory_now
end

function M.memory_retract(id)
  if not yes(("Retract %s? It never reaches a run again."):format(id)) then
    return nil
  end
  local retracted = M.call("memory/retract", { id = id })
  if retracted then
    vim.notify(("alp: retracted %s"):format(id))
    refresh_memory()
  end
  return retracted
end

--- Still true: a new version confirmed now (`memory/review` with `confirm`).
function M.memory_confirm(id)
  local result = M.call("memory/review", { cwd = vim.fn.getcwd(), confirm = { id } })
  if result then
    vim.notify(("alp: confirmed %s"):format(id))
    refresh_memory()
  end
  return result
end

--- What a root changed in the files (`thread/diff`); default: the last step.
function M.diff(thread, root)
  thread = (thread and thread ~= "") and thread or vim.env.ALP_THREAD_ID
  if not thread or thread == "" then
    notify_error("which thread? :AlpDiff ID [ROOT]")
    return nil
  end
  return open_named("alp://diff/" .. thread .. (root and ("/" .. root) or ""))
end

local function redraw_thread(thread)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and (name:match("^alp://diff/" .. vim.pesc(thread)) or name == "alp://thread/" .. thread) then
      M.refresh(buf)
    end
  end
end

--- Put the workspace's files back to before root `root` (nil: undo the last step, a
--- restore included — `alp thread undo --files`). What it will change is asked first; if
--- the files changed since, asked again before forcing. Returns the restore's result.
function M.restore(thread, root, force)
  if not thread or thread == "" then
    notify_error("which thread? :AlpRestore ID [ROOT]")
    return nil
  end
  local c = client()
  if not c then
    return nil
  end
  -- a dry run first (what it will change is asked about); one refused because the files
  -- changed since is asked about again, and then forced
  local params = { threadId = thread, root = root, dryRun = true, force = force or false }
  local dry, err = c:request_sync("thread/restore", params)
  if err and type(err.data) == "table" and err.data.name == "WORKSPACE_CHANGED" and not params.force then
    if not yes(rpc.describe(err) .. "\n\nRestore anyway? Those changes are lost (but checkpointed: undo brings them back).") then
      return nil
    end
    params.force = true
    dry, err = c:request_sync("thread/restore", params)
  end
  if err then
    notify_error(rpc.describe(err))
    return nil
  end
  if not yes(diff.restore_question(dry)) then
    return nil
  end
  params.dryRun = false
  local done
  done, err = c:request_sync("thread/restore", params)
  if err then
    notify_error(rpc.describe(err))
    return nil
  end
  vim.notify(("alp: restored %d files to before step %s; :AlpUndoFiles %s takes it back"):format(#done.changes, done.undone, thread))
  redraw_thread(thread)
  return done
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

--- Redraw every open alp buffer (`thread_id`: only the list and that thread's views): a
--- transcript reads what follows its last page.
local function refresh_open(thread_id)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      local name = vim.api.nvim_buf_get_name(buf)
      local of = name:match("^alp://thread/(.+)$") or name:match("^alp://log/(.+)$")
        or name:match("^alp://diff/([^/]+)")
      local wanted = name == "alp://threads" or (of ~= nil and (thread_id == nil or of == thread_id))
      if wanted then
        -- whatever goes wrong is reported once (not at every event) and never raised into
        -- the editor from a live update
        local ok, err
        if logs[buf] and name:match("^alp://log/") then
          ok, err = pcall(catch_up, buf, notify_background)
        else
          ok, err = pcall(M.refresh, buf, { background = true })
        end
        if not ok then
          notify_background(tostring(err))
        end
      end
    end
  end
end

--- A `thread/transcript` notification: its items go to the open transcripts of its thread.
local function on_transcript(params)
  for buf, view in pairs(logs) do
    if not vim.api.nvim_buf_is_valid(buf) then
      logs[buf] = nil
    elseif view.thread == params.threadId then
      local ok, err = pcall(function()
        transcript.take_live(view, params)
        draw_log(buf)
      end)
      if not ok then
        notify_background(tostring(err))
      end
    end
  end
end

--- The events the live connection subscribes to.
M.EVENTS = { "thread/changed", "execution/changed", "thread/transcript" }

local function on_event(method, params)
  if method == "thread/transcript" and type(params) == "table" then
    on_transcript(params)
    M.last_event = { method = method, params = params }
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AlpEvent", modeline = false })
    return
  end
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

--- Feed a notification as if the live connection had brought it (for tests).
M._on_event = on_event

local schedule_reconnect

local function subscribe(c, done)
  c:request("events/subscribe", { events = M.EVENTS }, function(err, result)
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
  local result, failure = c:request_sync("events/subscribe", { events = M.EVENTS })
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

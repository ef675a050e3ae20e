-- Drives the alp Neovim plugin in `nvim --headless` through what used to break it: a title
-- and a pin with line breaks, :AlpContinue and the `c` mapping under the default setup (no
-- setup() call), and a daemon restart after which live updates must come back by themselves.
-- Steps the Python side performs (tests/editors/test_nvim_plugin.py) are asked for by writing
-- $ALP_NVIM_STEPS/want-NAME and awaited as $ALP_NVIM_STEPS/done-NAME. What Neovim saw goes to
-- $ALP_NVIM_REPORT (JSON).
local report = { notifications = {}, steps = {} }
local steps = os.getenv("ALP_NVIM_STEPS")

local function save()
  local f = assert(io.open(os.getenv("ALP_NVIM_REPORT"), "w"))
  f:write(vim.json.encode(report))
  f:close()
end

local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(report.notifications, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  return notify(msg, level, opts)
end

local function step(name, timeout)
  local f = assert(io.open(steps .. "/want-" .. name, "w"))
  f:write(name)
  f:close()
  local done = vim.wait(timeout or 60000, function()
    return vim.loop.fs_stat(steps .. "/done-" .. name) ~= nil
  end, 20)
  assert(done, "the test never did step " .. name)
  table.insert(report.steps, name)
end

local function text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

--- Wait for `buf` to contain `needle`; returns whether it did.
local function wait_text(buf, needle, timeout)
  return vim.wait(timeout or 60000, function()
    return vim.api.nvim_buf_is_valid(buf) and text(buf):find(needle, 1, true) ~= nil
  end, 20)
end

--- Wait for a terminal job to end and its output to contain `needle`.
local function finish_terminal(job, buf, needle)
  local status = vim.fn.jobwait({ job }, 60000)[1]
  local seen = wait_text(buf, needle, 10000)
  return { status = status, seen = seen, lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
end

-- what the plugin asks the terminal to run (the real termopen runs it)
local termopen = vim.fn.termopen
report.termopen = {}
vim.fn.termopen = function(argv, opts)
  table.insert(report.termopen, argv)
  return termopen(argv, opts)
end

local ok, err = pcall(function()
  local alp = require("alp")
  alp.RETRY_FIRST_MS = 50

  -- a title with a line break, in the list
  local list = alp.threads()
  report.list = vim.api.nvim_buf_get_lines(list, 0, -1, false)

  -- a multi-line pin, in :AlpShow
  vim.cmd("AlpShow " .. os.getenv("ALP_NVIM_PIN_THREAD"))
  report.show = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  -- live: a thread with a line break in its title arrives as an event
  alp.threads()
  step("title-event")
  report.live_title = wait_text(list, "made ⏎ while watching")
  report.list_after_event = vim.api.nvim_buf_get_lines(list, 0, -1, false)

  -- :AlpContinue under the default setup: a real `alp thread continue` in a terminal
  local thread = os.getenv("ALP_NVIM_THREAD")
  vim.cmd("AlpContinue " .. thread .. " --runtime command -- echo continued-from-nvim")
  local term = vim.api.nvim_get_current_buf()
  report.continue_name = vim.api.nvim_buf_get_name(term)
  report.continue = finish_terminal(vim.b[term].terminal_job_id, term, "continued-from-nvim")
  vim.cmd("stopinsert")
  vim.cmd("bwipeout!")

  -- the `c` mapping of the list, on the seeded thread's line
  alp.threads()
  for i, line in ipairs(vim.api.nvim_buf_get_lines(list, 0, -1, false)) do
    if line:find(thread, 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
    end
  end
  vim.api.nvim_feedkeys("c", "x", false)
  local mapped = vim.api.nvim_get_current_buf()
  report.c_name = vim.api.nvim_buf_get_name(mapped)
  report.c_is_terminal = vim.bo[mapped].buftype == "terminal"
  if report.c_is_terminal then
    report.c = finish_terminal(vim.b[mapped].terminal_job_id, mapped, "[Process exited")
  end
  vim.cmd("stopinsert")
  vim.cmd("bwipeout!")

  -- the daemon restarts: the plugin says so once, reconnects, resubscribes
  alp.threads()
  local reconnected = false
  vim.api.nvim_create_autocmd("User", {
    pattern = "AlpReconnected",
    callback = function()
      reconnected = true
    end,
  })
  report.following_before = alp.following()
  step("restart", 120000)
  report.reconnected = vim.wait(60000, function()
    return reconnected and alp.following()
  end, 20)
  step("after-restart")
  report.live_after_restart = wait_text(list, "after the restart")
  report.list_after_restart = vim.api.nvim_buf_get_lines(list, 0, -1, false)
  local event = alp.last_event and alp.last_event.params
  report.last_event_title = event and event.thread and event.thread.title or vim.NIL
  report.errmsg = vim.v.errmsg
end)
report.ok, report.error = ok, err and tostring(err) or nil
save()
vim.cmd("qa!")

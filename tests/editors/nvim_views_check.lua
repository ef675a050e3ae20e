-- Drives the transcript, memory and diff views of the alp Neovim plugin in `nvim --headless`
-- against a real alpd (tests/editors/test_nvim_views.py seeds it and performs the steps it
-- is asked for: $ALP_NVIM_STEPS/want-NAME, answered by done-NAME). Questions the plugin asks
-- (confirm, input) are answered here and recorded. What Neovim saw goes to $ALP_NVIM_REPORT.
local report = { notifications = {}, confirms = {}, inputs = {} }
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

-- the answers to the plugin's questions, in order
local answers = { confirm = {}, input = {} }
vim.fn.confirm = function(question)
  table.insert(report.confirms, question)
  return table.remove(answers.confirm, 1) or 2
end
vim.fn.input = function(prompt)
  table.insert(report.inputs, prompt)
  return table.remove(answers.input, 1) or ""
end

local function step(name)
  local f = assert(io.open(steps .. "/want-" .. name, "w"))
  f:write(name)
  f:close()
  assert(vim.wait(120000, function()
    return vim.loop.fs_stat(steps .. "/done-" .. name) ~= nil
  end, 20), "the test never did step " .. name)
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false)
end

local function text(buf)
  return table.concat(lines(buf), "\n")
end

local function wait_text(buf, needle, timeout)
  return vim.wait(timeout or 60000, function()
    return text(buf):find(needle, 1, true) ~= nil
  end, 20)
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local function cursor_on(needle)
  for i, line in ipairs(lines()) do
    if line:find(needle, 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return i
    end
  end
  error("no line holds " .. needle)
end

local ok, err = pcall(function()
  local alp = require("alp")
  local transcript = require("alp.transcript")
  local thread, adopted = os.getenv("ALP_NVIM_THREAD"), os.getenv("ALP_NVIM_ADOPTED")

  -- the transcript of the adopted session, three items a page: the newest page, then older
  -- pages with `o` until the start of the thread
  transcript.PAGE = 3
  vim.cmd("AlpLog " .. adopted)
  local log = vim.api.nvim_get_current_buf()
  report.log_name = vim.api.nvim_buf_get_name(log)
  report.log_first = lines(log)
  local presses = 0
  while text(log):find("… older items: press o", 1, true) and presses < 50 do
    press("o")
    presses = presses + 1
  end
  report.log_presses = presses
  report.log_all = lines(log)
  report.log_cursor_line = vim.api.nvim_get_current_line()
  transcript.PAGE = 100

  -- the thread view: its root's time in the CLI's format; `d` opens the diff
  vim.cmd("AlpShow " .. thread)
  local show = vim.api.nvim_get_current_buf()
  report.show = lines(show)
  press("d")
  local diff = vim.api.nvim_get_current_buf()
  report.diff_name = vim.api.nvim_buf_get_name(diff)
  report.diff = lines(diff)
  report.diff_filetype = vim.bo[diff].filetype

  -- `U`: what it will change is asked first; yes restores
  answers.confirm = { 1 }
  press("U")
  step("restored")
  -- the restore itself is undone: the root's changes come back
  answers.confirm = { 1 }
  vim.cmd("AlpUndoFiles " .. thread)
  step("undone")
  -- a change made since: refused (WORKSPACE_CHANGED), asked again, forced
  local f = assert(io.open(os.getenv("ALP_NVIM_WORK") .. "/a.txt", "a"))
  f:write("three\n")
  f:close()
  answers.confirm = { 1, 1 }
  vim.cmd("AlpRestore " .. thread .. " 1")
  step("forced")

  -- the seeded thread's transcript follows by itself: a new root made elsewhere appears
  vim.cmd("AlpLog " .. thread)
  local live = vim.api.nvim_get_current_buf()
  report.live_before = lines(live)
  step("continue")
  report.live_root = wait_text(live, "root #2")
  report.live_after = lines(live)
  -- a thread/transcript notification's items appear after the page's, once each
  local item = {
    cursor = "t1.live-test", type = "reply", speaker = "assistant", text = "said while running",
    at = "2026-12-02T08:41:00Z", rootId = vim.NIL,
  }
  alp._on_event("thread/transcript", { threadId = thread, items = { item }, roots = {} })
  alp._on_event("thread/transcript", { threadId = thread, items = { item }, roots = {} })
  report.notified = lines(live)

  -- memory: the list, a pin promoted from the thread view (`m`), one added (`a`),
  -- superseded (`s`), confirmed (`c`), retracted (`x`), shown, reviewed
  vim.cmd("AlpMemory")
  local memory = vim.api.nvim_get_current_buf()
  report.memory_first = lines(memory)
  vim.cmd("AlpShow " .. thread)
  cursor_on("- " .. os.getenv("ALP_NVIM_DECISION"))
  press("m")
  report.memory_promoted = lines(memory)
  vim.api.nvim_set_current_buf(memory)
  answers.input = { "--scope global --kind convention run the tests with make check" }
  press("a")
  report.memory_added = lines(memory)
  cursor_on("run the tests with make check")
  answers.input = { "run the tests with make test" }
  press("s")
  report.memory_superseded = lines(memory)
  cursor_on("run the tests with make test")
  press("c")
  cursor_on(os.getenv("ALP_NVIM_MEMORY"))
  answers.confirm = { 1 }
  press("x")
  report.memory_retracted = lines(memory)
  cursor_on("run the tests with make test")
  press("<CR>")
  report.memory_show_name = vim.api.nvim_buf_get_name(0)
  report.memory_show = lines()
  vim.cmd("AlpMemoryReview")
  report.memory_review = lines()
  report.errmsg = vim.v.errmsg
end)
report.ok, report.error = ok, err and tostring(err) or nil
save()
vim.cmd("qa!")

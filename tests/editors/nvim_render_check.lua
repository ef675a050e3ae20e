-- Renders thread views from results shaped as alpd's — with a recap, with a null one, and
-- with none (a daemon without recaps) — through the plugin's pure render module, and writes
-- the lines to $ALP_NVIM_REPORT (JSON) for tests/editors/test_nvim_plugin.py.
local report = {}
local ok, err = pcall(function()
  local render = require("alp.render")
  local show = {
    thread = { id = "thread_1", title = "the title", status = "open", revision = 2, workspace = "/w" },
    context = {
      revision = 1,
      digest = "sha256:0",
      snapshot = { objective = { text = "ship the ledger", sourceExecutionId = "exec_1" } },
    },
    roots = {
      { id = "exec_1", sequence = 1, runtime = "command", agent = "command", kind = "interactive",
        status = "settled", outcome = "completed", createdAt = "2026-11-30T10:00:00Z",
        summary = "schema written" },
    },
    history = { level = "full", entries = 3 },
  }
  report.absent = render.thread_view(show)
  show.recap = vim.NIL
  report.null = render.thread_view(show)
  show.recap = {
    threadId = "thread_1",
    headline = "Ledger: schema settled, migrations next",
    gist = "The schema is settled.\nMigrations come next.",
    openTasks = { "write the first migration" },
    sourceRevision = 1,
  }
  report.recap = render.thread_view(show)
  report.list = render.thread_list({
    { id = "thread_1", title = "the title", headline = "Ledger: schema settled", status = "open",
      revision = 2, busyRoot = vim.NIL },
    { id = "thread_2", title = "plain", headline = vim.NIL, status = "open", revision = 0 },
  }, "/w")
end)
report.ok = ok
report.error = ok and nil or tostring(err)
local f = assert(io.open(os.getenv("ALP_NVIM_REPORT"), "w"))
f:write(vim.json.encode(report))
f:close()
vim.cmd("qall!")

-- Lines of text for alp's buffers, from the daemon's results (pure: no Neovim state).
local clock = require("alp.clock")

local M = {}

--- A value from the daemon's JSON, with JSON null (vim.NIL) read as nil.
function M.value(x)
  if x == nil or x == vim.NIL then
    return nil
  end
  return x
end

local value = M.value

--- A list buffer's last lines: a blank line and the keys' help, neither naming an item
--- (`ids` holds false for them); the lines and ids, for a `return`.
function M.footer(lines, ids, help)
  vim.list_extend(lines, { "", help })
  vim.list_extend(ids, { false, false })
  return lines, ids
end

--- Text from the daemon on one buffer line: a line break (a buffer line cannot hold one)
--- shows as ⏎, other control characters as a space. Anything not a string is tostring'd.
function M.oneline(text)
  text = tostring(text)
  text = text:gsub("\r\n", "\n"):gsub("\n", " ⏎ "):gsub("[%c]", " ")
  return text
end

--- Text from the daemon over as many buffer lines as it has (CR LF, CR and LF all break),
--- each cleaned of other control characters.
function M.lines(text)
  text = tostring(text):gsub("\r\n?", "\n")
  local out = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    local clean = line:gsub("[%c]", " ")
    table.insert(out, clean)
  end
  return out
end

--- `first` on one line, the rest of `text`'s lines under it indented by `indent` spaces.
local function block(lines, first_prefix, indent, text, suffix)
  local parts = M.lines(text)
  for i, part in ipairs(parts) do
    local line = (i == 1 and first_prefix or (" "):rep(indent)) .. part
    if i == 1 and suffix then
      line = line .. suffix
    end
    table.insert(lines, line)
  end
end

--- What a thread is called: its recap's headline (kept by alpd's recap model, when there is
--- one: `thread/list` gives it on the thread, `thread/show` in `recap`), else its title.
function M.headline(thread, recap)
  return M.oneline(value(thread.headline) or (recap and value(recap.headline)) or value(thread.title) or "(untitled)")
end

--- One line per thread: a busy marker, the headline, status, revision and id.
--- Returns lines and, per line, the thread id it shows.
function M.thread_list(threads, workspace)
  local lines, ids = { "alp threads in " .. workspace, "" }, { false, false }
  if #threads == 0 then
    table.insert(lines, "  no threads here yet: `alp` starts one")
    table.insert(ids, false)
  end
  for _, thread in ipairs(threads) do
    local busy = value(thread.busyRoot) and "●" or " "
    table.insert(
      lines,
      ("%s %-40s %-8s rev %-3d %s"):format(
        busy,
        M.headline(thread),
        M.oneline(thread.status),
        thread.revision,
        M.oneline(thread.id)
      )
    )
    table.insert(ids, thread.id)
  end
  return M.footer(lines, ids, "<CR> show   l transcript   d diff   c continue in a terminal   r refresh   (● = a run is in progress)")
end

local SECTIONS = {
  { "objective", "Objective" },
  { "decisions", "Decisions" },
  { "constraints", "Constraints" },
  { "openItems", "Open items" },
  { "nextActions", "Next actions" },
}

--- The context's lines, and per line index (from 1) the id of the pin it starts.
local function context_lines(snapshot)
  local lines, pins = {}, {}
  for _, section in ipairs(SECTIONS) do
    local entries = value(snapshot[section[1]])
    if entries ~= nil and entries.text ~= nil then
      entries = { entries }
    end
    if entries ~= nil and #entries > 0 then
      table.insert(lines, "  " .. section[2] .. ":")
      for _, line in ipairs(entries) do
        -- a multi-line pin: its first line carries the source, the others are indented under it
        local source = ("  [%s]"):format(M.oneline(value(line.sourceExecutionId) or "?"))
        pins[#lines + 1] = value(line.id) or false
        block(lines, "    - ", 6, value(line.text) or "", source)
      end
    end
  end
  if #lines == 0 then
    table.insert(lines, "  (empty: nothing pinned yet)")
  end
  return lines, pins
end

local function root_line(root)
  return ("  #%-3s %-7s %-12s %-11s %-11s %s  %s"):format(
    M.oneline(value(root.sequence) or "?"),
    M.oneline(root.runtime),
    M.oneline(root.agent),
    M.oneline(root.kind),
    M.oneline(value(root.outcome) or root.status),
    clock.local_time(value(root.startedAt) or root.createdAt),
    M.oneline(root.id)
  )
end

--- The gist: the recap's (with its open tasks) when alpd has made one, else the pinned
--- objective and the last run's summary.
local function gist_lines(show)
  local recap = value(show.recap)
  local gist = recap and value(recap.gist)
  local lines = {}
  if gist then
    table.insert(lines, ("Gist (recap of context rev %s; derived, not authority)"):format(
      tostring(value(recap.sourceRevision) or "?")
    ))
    for _, line in ipairs(M.lines(gist)) do
      table.insert(lines, "  " .. line)
    end
    local tasks = value(recap.openTasks) or {}
    if #tasks > 0 then
      table.insert(lines, "  Open tasks:")
      for _, task in ipairs(tasks) do
        block(lines, "    - ", 6, task)
      end
    end
    return lines
  end
  table.insert(lines, "Gist")
  local objective = value(show.context.snapshot.objective)
  local last = show.roots[#show.roots]
  block(lines, "  ", 2, (objective and value(objective.text)) or "(no objective pinned)")
  if last and value(last.summary) then
    block(lines, "  last run: ", 4, last.summary)
  end
  return lines
end

--- The thread view: header, gist, roots timeline, context with each line's source.
--- Returns its lines and, by line number, the id of the pin that line starts.
function M.thread_view(show)
  local thread, context = show.thread, show.context
  local lines = {
    ("%s  %s"):format(M.headline(thread, value(show.recap)), M.oneline(thread.id)),
    ("status %s   revision %d   context rev %d   workspace %s"):format(
      M.oneline(thread.status),
      thread.revision,
      context.revision,
      M.oneline(thread.workspace)
    ),
  }
  if value(thread.busyRoot) then
    table.insert(lines, "● running " .. M.oneline(thread.busyRoot))
  end
  table.insert(lines, "")
  vim.list_extend(lines, gist_lines(show))
  table.insert(lines, "")
  table.insert(lines, ("Roots (%d)"):format(#show.roots))
  for _, root in ipairs(show.roots) do
    table.insert(lines, root_line(root))
  end
  table.insert(lines, "")
  table.insert(lines, ("Context rev %d  %s"):format(context.revision, M.oneline(context.digest)))
  local context_at = #lines
  local pinned, pins_in = context_lines(context.snapshot)
  vim.list_extend(lines, pinned)
  table.insert(lines, "")
  table.insert(lines, ("History: %s, %d entries"):format(M.oneline(show.history.level), value(show.history.entries) or 0))
  table.insert(lines, "l transcript   d diff of the last root   m make the pin under the cursor a memory   c continue   r refresh")
  -- a list (false where no pin starts): a buffer variable holds a list, not a sparse table
  local pins = {}
  for i = 1, #lines do
    pins[i] = pins_in[i - context_at] or false
  end
  return lines, pins
end

--- Quickfix items for search hits: each opens the hit's thread view.
function M.search_items(result)
  local items = {}
  for _, hit in ipairs(result.hits) do
    local thread = value(hit.threadId)
    local label = M.oneline(value(hit.threadTitle) or thread or "legacy session")
    local where = value(hit.sequence) and (" #" .. hit.sequence) or ""
    table.insert(items, {
      filename = thread and ("alp://thread/" .. thread) or nil,
      lnum = 1,
      text = ("[%s%s %s] %s"):format(label, where, M.oneline(value(hit.role) or hit.source), M.oneline(hit.snippet)),
      valid = thread ~= nil,
    })
  end
  return items
end

return M

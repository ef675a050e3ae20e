-- Lines of text for alp's buffers, from the daemon's results (pure: no Neovim state).
local M = {}

local function value(x)
  if x == nil or x == vim.NIL then
    return nil
  end
  return x
end

--- What a thread is called: its recap's headline (kept by alpd's recap model, when there is
--- one: `thread/list` gives it on the thread, `thread/show` in `recap`), else its title.
function M.headline(thread, recap)
  return value(thread.headline) or (recap and value(recap.headline)) or value(thread.title) or "(untitled)"
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
      ("%s %-40s %-8s rev %-3d %s"):format(busy, M.headline(thread), thread.status, thread.revision, thread.id)
    )
    table.insert(ids, thread.id)
  end
  table.insert(lines, "")
  table.insert(lines, "<CR> show   c continue in a terminal   r refresh   (● = a run is in progress)")
  table.insert(ids, false)
  table.insert(ids, false)
  return lines, ids
end

local SECTIONS = {
  { "objective", "Objective" },
  { "decisions", "Decisions" },
  { "constraints", "Constraints" },
  { "openItems", "Open items" },
  { "nextActions", "Next actions" },
}

local function context_lines(snapshot)
  local lines = {}
  for _, section in ipairs(SECTIONS) do
    local entries = value(snapshot[section[1]])
    if entries ~= nil and entries.text ~= nil then
      entries = { entries }
    end
    if entries ~= nil and #entries > 0 then
      table.insert(lines, "  " .. section[2] .. ":")
      for _, line in ipairs(entries) do
        table.insert(lines, ("    - %s  [%s]"):format(line.text, value(line.sourceExecutionId) or "?"))
      end
    end
  end
  if #lines == 0 then
    table.insert(lines, "  (empty: nothing pinned yet)")
  end
  return lines
end

local function root_line(root)
  return ("  #%-3s %-7s %-12s %-11s %-11s %s  %s"):format(
    tostring(value(root.sequence) or "?"),
    root.runtime,
    root.agent,
    root.kind,
    value(root.outcome) or root.status,
    value(root.startedAt) or root.createdAt,
    root.id
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
    for _, line in ipairs(vim.split(gist, "\n", { plain = true })) do
      table.insert(lines, "  " .. line)
    end
    local tasks = value(recap.openTasks) or {}
    if #tasks > 0 then
      table.insert(lines, "  Open tasks:")
      for _, task in ipairs(tasks) do
        table.insert(lines, "    - " .. task)
      end
    end
    return lines
  end
  table.insert(lines, "Gist")
  local objective = value(show.context.snapshot.objective)
  local last = show.roots[#show.roots]
  table.insert(lines, "  " .. ((objective and objective.text) or "(no objective pinned)"))
  if last and value(last.summary) then
    table.insert(lines, "  last run: " .. last.summary)
  end
  return lines
end

--- The thread view: header, gist, roots timeline, context with each line's source.
function M.thread_view(show)
  local thread, context = show.thread, show.context
  local lines = {
    ("%s  %s"):format(M.headline(thread, value(show.recap)), thread.id),
    ("status %s   revision %d   context rev %d   workspace %s"):format(
      thread.status,
      thread.revision,
      context.revision,
      thread.workspace
    ),
  }
  if value(thread.busyRoot) then
    table.insert(lines, "● running " .. thread.busyRoot)
  end
  table.insert(lines, "")
  vim.list_extend(lines, gist_lines(show))
  table.insert(lines, "")
  table.insert(lines, ("Roots (%d)"):format(#show.roots))
  for _, root in ipairs(show.roots) do
    table.insert(lines, root_line(root))
  end
  table.insert(lines, "")
  table.insert(lines, ("Context rev %d  %s"):format(context.revision, context.digest))
  vim.list_extend(lines, context_lines(context.snapshot))
  table.insert(lines, "")
  table.insert(lines, ("History: %s, %d entries"):format(show.history.level, show.history.entries or 0))
  return lines
end

--- Quickfix items for search hits: each opens the hit's thread view.
function M.search_items(result)
  local items = {}
  for _, hit in ipairs(result.hits) do
    local thread = value(hit.threadId)
    local label = value(hit.threadTitle) or thread or "legacy session"
    local where = value(hit.sequence) and (" #" .. hit.sequence) or ""
    table.insert(items, {
      filename = thread and ("alp://thread/" .. thread) or nil,
      lnum = 1,
      text = ("[%s%s %s] %s"):format(label, where, value(hit.role) or hit.source, hit.snippet:gsub("\n", " ")),
      valid = thread ~= nil,
    })
  end
  return items
end

return M

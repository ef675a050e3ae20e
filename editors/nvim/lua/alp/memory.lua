-- Memory across threads (`memory/*`) in buffers: alp://memory (this workspace's memories and
-- the global ones), alp://memory/<id> (a memory, its versions and its citation) and
-- alp://memory-review (not confirmed for 90 days, or citing a file that changed). The
-- person's actions: add, promote a pin, supersede, retract, confirm. Rendering is pure; the
-- actions ask the daemon through require("alp").call and redraw the open memory buffers.
local clock = require("alp.clock")
local render = require("alp.render")

local M = {}

local KINDS = { fact = true, convention = true, preference = true, lesson = true }
local SCOPES = { workspace = true, global = true }

local value = render.value

local function memory_line(memory)
  return ("%-10s %-9s %-10s %s  %s  confirmed %s"):format(
    render.oneline(memory.kind),
    render.oneline(memory.scope),
    render.oneline(memory.status),
    render.oneline(memory.text),
    render.oneline(memory.id),
    clock.local_time(value(memory.confirmedAt))
  )
end

--- The list's lines and, per line, the memory id it shows (false: none). Pure.
function M.list_lines(result, workspace)
  local lines = { "alp memory of " .. render.oneline(workspace) .. " (and global)", "" }
  local ids = { false, false }
  if #result.memories == 0 then
    table.insert(lines, "  no memories yet: a add, or :AlpMemoryPromote THREAD PIN")
    table.insert(ids, false)
  end
  for _, memory in ipairs(result.memories) do
    table.insert(lines, memory_line(memory))
    table.insert(ids, memory.id)
  end
  local tampered = value(result.tampered) or {}
  if #tampered > 0 then
    table.insert(lines, "")
    table.insert(lines, "left out, their chain no longer verifies (MEMORY_TAMPERED): " .. table.concat(tampered, ", "))
    table.insert(ids, false)
    table.insert(ids, false)
  end
  return render.footer(lines, ids, "<CR> show   a add   s supersede   x retract   c confirm (still true)   R review   r refresh")
end

--- A memory: what it says, its state, its citation, its versions (chain verified). Pure.
function M.show_lines(show)
  local memory, citation = show.memory, show.citation
  local lines = {}
  for i, line in ipairs(render.lines(memory.text)) do
    table.insert(lines, (i == 1 and "" or "  ") .. line)
  end
  table.insert(lines, ("%s · %s · %s · version %d · %s"):format(
    render.oneline(memory.kind), render.oneline(memory.scope), render.oneline(memory.status),
    memory.version, render.oneline(memory.id)
  ))
  table.insert(lines, ("confirmed %s   created %s   changed %s"):format(
    clock.local_time(value(memory.confirmedAt)), clock.local_time(value(memory.createdAt)),
    clock.local_time(value(memory.updatedAt))
  ))
  table.insert(lines, "workspace " .. render.oneline(value(memory.workspace) or "(global)"))
  if value(memory.filePath) then
    table.insert(lines, "about the file " .. render.oneline(memory.filePath))
  end
  table.insert(lines, "")
  table.insert(lines, "Cites")
  table.insert(lines, "  " .. render.oneline(citation.text))
  if value(citation.lineText) then
    table.insert(lines, "  the line: " .. render.oneline(citation.lineText))
  end
  if value(citation.threadId) and not value(citation.threadExists) then
    table.insert(lines, "  (that thread is gone: the citation is kept as text)")
  end
  table.insert(lines, "")
  table.insert(lines, ("Versions (%d)"):format(#show.versions))
  for _, version in ipairs(show.versions) do
    table.insert(lines, ("  v%d %-10s %-10s %s  %s"):format(
      version.version, render.oneline(version.change), render.oneline(version.status),
      clock.local_time(value(version.at)), render.oneline(version.text)
    ))
  end
  table.insert(lines, "")
  table.insert(lines, "s supersede   x retract   c confirm (still true)   r refresh")
  return lines
end

--- The review: stale memories and those whose cited file changed. Lines and ids. Pure.
function M.review_lines(result, days)
  local lines, ids = { ("alp memory review: not confirmed for %d days, or citing a changed file"):format(days), "" }, { false, false }
  table.insert(lines, ("Not confirmed for %d days (%d)"):format(days, #result.stale))
  table.insert(ids, false)
  for _, memory in ipairs(result.stale) do
    table.insert(lines, "  " .. memory_line(memory))
    table.insert(ids, memory.id)
  end
  table.insert(lines, "")
  table.insert(lines, ("Their file changed (%d)"):format(#result.changed))
  table.insert(ids, false)
  table.insert(ids, false)
  for _, change in ipairs(result.changed) do
    local state = value(change.nowSha256) and "changed" or "gone"
    table.insert(lines, ("  %s  (%s %s)"):format(memory_line(change.memory), render.oneline(change.filePath), state))
    table.insert(ids, change.memory.id)
  end
  return render.footer(lines, ids, "c confirm (still true)   s supersede   x retract   <CR> show   r refresh")
end

--- `[--scope workspace|global] [--kind K] TEXT` → params, or nil and why.
function M.parse_add(args)
  local params = {}
  local rest = vim.trim(args or "")
  while true do
    local flag, word, after = rest:match("^%-%-(%a+)[= ](%S+)%s*(.*)$")
    if not flag then
      break
    end
    if flag == "scope" and SCOPES[word] then
      params.scope = word
    elseif flag == "kind" and KINDS[word] then
      params.kind = word
    else
      return nil, ("--%s %s: --scope is workspace or global, --kind fact, convention, preference or lesson"):format(flag, word)
    end
    rest = after
  end
  if rest == "" then
    return nil, "what to remember? :AlpMemoryAdd [--scope global] [--kind K] TEXT"
  end
  params.text = rest
  return params
end

return M

-- What a root changed in the workspace's files (`thread/diff`), in a buffer
-- alp://diff/<thread>[/<N>] (filetype diff), and putting the files back (`thread/restore`):
-- what a restore would change is listed and asked about first; a restore refused because
-- the files changed since (WORKSPACE_CHANGED) is offered again with force. Pure rendering.
local render = require("alp.render")

local M = {}

local value = render.value

--- The diff buffer's lines. Pure.
function M.diff_lines(diff)
  local root = value(diff.root)
  local what = root and ("root #%d"):format(root) or ("step " .. render.oneline(diff.step))
  local lines = {
    ("alp diff  %s  %s%s"):format(render.oneline(diff.threadId), what, value(diff.running) and "  (running: against the files now)" or ""),
    "workspace " .. render.oneline(diff.workspace),
    "U put the files back to before this step   r refresh",
    "",
    ("Files (%d)"):format(#diff.files),
  }
  for _, file in ipairs(diff.files) do
    local counts = value(file.added) and ("+%d -%d"):format(file.added, value(file.deleted) or 0) or "binary"
    table.insert(lines, ("  %s %s  %s"):format(render.oneline(file.status), render.oneline(file.path), counts))
  end
  local skipped = value(diff.skipped) or {}
  if #skipped > 0 then
    table.insert(lines, ("Left out of the checkpoints (%d)"):format(#skipped + (value(diff.skippedMore) or 0)))
    for _, file in ipairs(skipped) do
      table.insert(lines, ("  %s  %s"):format(render.oneline(file.path), render.oneline(file.reason)))
    end
  end
  table.insert(lines, "")
  local patch = value(diff.patch) or ""
  if patch ~= "" then
    local body = render.lines(patch)
    if body[#body] == "" then
      table.remove(body)
    end
    vim.list_extend(lines, body)
  end
  if value(diff.patchTruncated) then
    table.insert(lines, "… the patch is cut here (`alp thread diff` prints it whole)")
  end
  return lines
end

--- What a restore will do (a dry run's answer), as a question. Pure.
function M.restore_question(dry)
  local lines = { ("Put the files of %s back to before step %s?"):format(dry.workspace, dry.undone) }
  for _, change in ipairs(dry.changes) do
    table.insert(lines, ("  %s %s (%s)"):format(change.action, render.oneline(change.path), change.why))
  end
  if (value(dry.changesMore) or 0) > 0 then
    table.insert(lines, ("  … and %d more"):format(dry.changesMore))
  end
  if #dry.changes == 0 then
    table.insert(lines, "  (nothing to change)")
  end
  return table.concat(lines, "\n")
end

return M

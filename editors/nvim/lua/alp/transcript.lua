-- A thread's transcript (`thread/transcript`) in a buffer, alp://log/<thread>: the newest
-- page first, older pages on demand (`o`), newer items as they come — the
-- `thread/transcript` notification of the live connection (items while a root runs), and a
-- read of what follows the last page (`after`) when the thread or one of its runs changes.
--
-- What a page gave is kept in order (`items`); items a notification brought that no page
-- has given yet are shown after them (`live`) until a page gives them in their place.
local clock = require("alp.clock")
local render = require("alp.render")

local M = {}

--- items per page (thread/transcript's limit: 1..500)
M.PAGE = 100
--- pages read at most at once when catching up after an event
M.CATCH_UP_PAGES = 10
--- characters of a tool's input and of its result on its line (as `alp thread log`)
M.TOOL_CHARS = 80

local value = render.value

local SPEAKERS = { person = "you", assistant = "assistant", tool = "tool", system = "system" }

local function short(text, limit)
  text = render.oneline(text or "")
  if vim.fn.strchars(text) > limit then
    return vim.fn.strcharpart(text, 0, limit - 1) .. "…"
  end
  return text
end

--- `head` then `text`'s lines, the others indented under the text's column.
local function block(lines, head, text)
  local indent = (" "):rep(vim.fn.strdisplaywidth(head))
  for i, line in ipairs(render.lines(text or "")) do
    table.insert(lines, (i == 1 and head or indent) .. line)
  end
end

local function cost(root)
  local usd = root and value(root.costUsd)
  return usd and (" · $%.4f"):format(usd) or ""
end

--- One item as buffer lines, in `alp thread log`'s shape: `HH:MM ZONE speaker  text`, a
--- tool call on one line (`⚙ name input → result`), markers as `── …`. `roots`: the page's
--- roots by id (a root marker shows its cost and labels). Pure.
function M.item_lines(item, roots, full)
  local lines = {}
  local at = clock.local_time(value(item.at), true)
  local kind = item.type
  local text = value(item.text) or ""
  if kind == "tool" then
    local tool = value(item.tool) or {}
    local limit = full and math.huge or M.TOOL_CHARS
    local line = ("%s ⚙ %s %s"):format(at, render.oneline(value(tool.name) or "tool"), short(value(tool.input), limit))
    local result = value(tool.result)
    if result ~= nil then
      local shown = short(result, limit)
      line = line .. (value(tool.isError) and " ✗ " or " → ") .. (shown ~= "" and shown or "(no output)")
    end
    table.insert(lines, line)
  elseif kind == "root" then
    local root = roots and roots[value(item.rootId) or ""]
    local status = value(item.status)
    local head = "── " .. render.oneline(text) .. (status and (" · " .. render.oneline(status)) or "")
    head = head .. cost(root) .. " · " .. at .. " ──"
    local labels = value(item.labels) or {}
    if #labels > 0 then
      head = head .. "  [" .. table.concat(labels, ", ") .. "]"
    end
    table.insert(lines, head)
  elseif kind == "clear" or kind == "undo" or kind == "compaction" then
    table.insert(lines, ("── %s · %s"):format(render.oneline(text), at))
  elseif kind == "prompt" or kind == "reply" or kind == "error" then
    local speaker = value(item.speaker) or ""
    local who = kind == "error" and "error" or (SPEAKERS[speaker] or speaker)
    block(lines, ("%s %s  "):format(at, who), text)
  else
    local source = value(item.source) or value(item.threadId) or "?"
    local label = ({
      push = "push from " .. source,
      scheduled = "scheduled",
      ["sub-agent"] = "sub-agent result",
      ["handoff-in"] = "handoff from " .. source,
      ["handoff-out"] = "handoff to " .. source,
      report = "report (" .. (value(item.status) or "?") .. ")",
      recap = "recap",
    })[kind] or kind
    block(lines, ("%s %s  "):format(at, render.oneline(label)), text)
    if value(item.envelope) then
      table.insert(lines, "      " .. render.oneline(item.envelope))
    end
  end
  return lines
end

--- The buffer's lines for a view's state. Pure.
function M.view_lines(view)
  local lines = {
    ("alp transcript  %s%s"):format(render.oneline(view.thread), view.full and "  (full tool text)" or ""),
    "o older   r newest page   F full tool text   (new items appear as they are written)",
    "",
  }
  if view.more_before then
    table.insert(lines, "… older items: press o")
  elseif #view.items > 0 or #view.live > 0 then
    table.insert(lines, "(the start of the thread)")
  else
    table.insert(lines, "(nothing said yet)")
  end
  for _, item in ipairs(view.items) do
    vim.list_extend(lines, M.item_lines(item, view.roots, view.full))
  end
  for _, item in ipairs(view.live) do
    vim.list_extend(lines, M.item_lines(item, view.roots, view.full))
  end
  return lines
end

--- A new view's state (nothing read yet).
function M.new_view(thread)
  return { thread = thread, items = {}, live = {}, seen = {}, roots = {}, full = false }
end

local function take_roots(view, roots)
  for _, root in ipairs(value(roots) or {}) do
    view.roots[root.id] = root
  end
end

--- Drop from `live` what the pages now hold.
local function settle_live(view)
  local kept = {}
  for _, item in ipairs(view.live) do
    if not view.seen[item.cursor] then
      table.insert(kept, item)
    end
  end
  view.live = kept
end

--- A page read from no cursor: the view starts over from it.
function M.take_newest(view, page)
  view.items, view.seen, view.roots = {}, {}, {}
  M.take_newer(view, page)
  view.previous = value(page.previous)
  view.more_before = value(page.moreBefore) == true
end

--- A page read `before = view.previous`: its items go first.
function M.take_older(view, page)
  local older = {}
  for _, item in ipairs(page.items) do
    if not view.seen[item.cursor] then
      view.seen[item.cursor] = true
      table.insert(older, item)
    end
  end
  view.items = vim.list_extend(older, view.items)
  take_roots(view, page.roots)
  view.previous = value(page.previous)
  view.more_before = value(page.moreBefore) == true
  settle_live(view)
end

--- Puts `item` where `list` holds the item of the same cursor; whether it did.
local function replace(list, item)
  for i, held in ipairs(list) do
    if held.cursor == item.cursor then
      list[i] = item
      return true
    end
  end
  return false
end

--- A page read `after = view.next` (or the newest page): its items go last; an item the
--- view holds already (a report given again with later entries) is replaced in place.
function M.take_newer(view, page)
  for _, item in ipairs(page.items) do
    if view.seen[item.cursor] then
      replace(view.items, item)
    else
      view.seen[item.cursor] = true
      table.insert(view.items, item)
    end
  end
  take_roots(view, page.roots)
  if value(page.next) and page.next ~= "" then
    view.next = page.next
  end
  settle_live(view)
  return value(page.moreAfter) == true
end

--- Items of a `thread/transcript` notification: shown after the pages' items until a page
--- gives them (an item given twice is shown once, its newest form).
function M.take_live(view, notification)
  take_roots(view, notification.roots)
  for _, item in ipairs(value(notification.items) or {}) do
    if view.seen[item.cursor] then
      replace(view.items, item)
    elseif not replace(view.live, item) then
      table.insert(view.live, item)
    end
  end
end

return M

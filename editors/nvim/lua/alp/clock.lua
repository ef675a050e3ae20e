-- The one way alp shows a moment, as the CLI (alpctl/clock.py): local time with its zone,
-- `2026-12-02 09:41 CET`; a conversation's lines drop today's date (`09:41 CET`). Times on
-- the wire are ISO 8601 in UTC. os.date asks libc, as Python's time.strftime does, so the
-- zone's name is the same one (tests/editors compare the two).
local M = {}

--- Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
local function days_from_civil(year, month, day)
  if month <= 2 then
    year = year - 1
  end
  local era = math.floor(year / 400)
  local year_of_era = year - era * 400
  local shifted = month > 2 and month - 3 or month + 9
  local day_of_year = math.floor((153 * shifted + 2) / 5) + day - 1
  local day_of_era = year_of_era * 365 + math.floor(year_of_era / 4) - math.floor(year_of_era / 100) + day_of_year
  return era * 146097 + day_of_era - 719468
end

--- Whole seconds since the epoch of `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`, else nil.
function M.epoch_of(iso)
  if type(iso) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, rest = iso:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d)(.*)$")
  if not y then
    return nil
  end
  local seconds = 0
  local s = rest:match("^:(%d%d)")
  if s then
    seconds = tonumber(s)
    rest = rest:sub(4)
    local fraction = rest:match("^%.(%d+)")
    if fraction then
      rest = rest:sub(#fraction + 2)
    end
  end
  local offset = 0
  if rest == "Z" then
    offset = 0
  else
    local sign, oh, om = rest:match("^([+-])(%d%d):(%d%d)$")
    if not sign then
      return nil
    end
    offset = (sign == "+" and 1 or -1) * (tonumber(oh) * 3600 + tonumber(om) * 60)
  end
  local days = days_from_civil(tonumber(y), tonumber(mo), tonumber(d))
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + seconds - offset
end

--- `2026-12-02 09:41 CET` in this machine's zone; `-` for none; what is not a time, as it
--- is. `today_short`: a moment of today as `09:41 CET` (a conversation's lines).
function M.local_time(iso, today_short)
  if iso == nil or iso == vim.NIL or iso == "" then
    return "-"
  end
  local epoch = M.epoch_of(iso)
  if epoch == nil then
    return tostring(iso)
  end
  local zone = os.date("%Z", epoch)
  if zone == nil or zone == "" then
    zone = os.date("%z", epoch)
  end
  if today_short and os.date("%Y-%m-%d", epoch) == os.date("%Y-%m-%d") then
    return os.date("%H:%M ", epoch) .. zone
  end
  return os.date("%Y-%m-%d %H:%M ", epoch) .. zone
end

return M

// The one way alp shows a moment, as the CLI (alpctl/clock.py): local time with its zone,
// `2026-12-02 09:41 CET`; a conversation's lines drop today's date (`09:41 CET`). Times on
// the wire are ISO 8601 in UTC. No `vscode` import: tested under plain Node against the CLI.
//
// The zone's name is the one libc gives Python's `%Z`: read from the same tz database file
// ($TZ, else /etc/localtime; a TZif file, RFC 8536) — JavaScript's Intl names zones per
// locale ("GMT+1" where the CLI says "CET"). Past the file's last transition its footer's
// POSIX rule names the zone, standard or daylight time as the offset says.
import * as fs from "node:fs";
import * as path from "node:path";

interface ZoneType {
  offset: number; // seconds east of UTC
  name: string;
}

interface Zone {
  transitions: number[]; // seconds since the epoch, ascending
  types: number[]; // the type after each transition
  table: ZoneType[];
  footer?: { std: ZoneType; dst?: ZoneType };
}

/** `+04`, `CET`, `<+0330>` in a POSIX TZ string: the names and their UTC offsets. */
function parsePosix(rule: string): Zone["footer"] | undefined {
  const name = String.raw`(<[^>]+>|[A-Za-z]{3,})`;
  const offset = String.raw`([+-]?\d{1,2}(?::\d{2}(?::\d{2})?)?)`;
  const match = new RegExp(`^${name}${offset}(?:${name}(${offset.slice(1, -1)})?)?`).exec(rule);
  if (!match) return undefined;
  const seconds = (text: string): number => {
    const sign = text.startsWith("-") ? -1 : 1;
    const [h, m = "0", s = "0"] = text.replace(/^[+-]/, "").split(":");
    return sign * (Number(h) * 3600 + Number(m) * 60 + Number(s));
  };
  const bare = (text: string) => text.replace(/^<|>$/g, "");
  // POSIX offsets are west of UTC: CET-1 is UTC+1; daylight time is an hour ahead by default
  const std = { name: bare(match[1]), offset: -seconds(match[2]) };
  if (!match[3]) return { std };
  const dst = { name: bare(match[3]), offset: match[4] ? -seconds(match[4]) : std.offset + 3600 };
  return { std, dst };
}

function readTzif(data: Buffer): Zone | undefined {
  if (data.length < 44 || data.toString("latin1", 0, 4) !== "TZif") return undefined;
  const version = data[4];
  const counts = (at: number) => [0, 1, 2, 3, 4, 5].map((i) => data.readUInt32BE(at + 20 + i * 4));
  let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(0);
  let at = 44;
  let timeSize = 4;
  if (version >= 0x32) {
    // skip the 32-bit block: the 64-bit one follows with its own header
    at += timecnt * 4 + timecnt + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
    [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(at);
    at += 44;
    timeSize = 8;
  }
  const transitions: number[] = [];
  for (let i = 0; i < timecnt; i++) {
    transitions.push(timeSize === 8 ? Number(data.readBigInt64BE(at + i * 8)) : data.readInt32BE(at + i * 4));
  }
  at += timecnt * timeSize;
  const types = [...data.subarray(at, at + timecnt)];
  at += timecnt;
  const raw: { offset: number; abbr: number }[] = [];
  for (let i = 0; i < typecnt; i++) raw.push({ offset: data.readInt32BE(at + i * 6), abbr: data[at + i * 6 + 5] });
  at += typecnt * 6;
  const chars = data.subarray(at, at + charcnt);
  const table = raw.map(({ offset, abbr }) => {
    const end = chars.indexOf(0, abbr);
    return { offset, name: chars.toString("latin1", abbr, end < 0 ? undefined : end) };
  });
  at += charcnt + leap * (timeSize + 4) + isstd + isut;
  let footer: Zone["footer"];
  if (timeSize === 8 && data[at] === 0x0a) {
    const end = data.indexOf(0x0a, at + 1);
    footer = parsePosix(data.toString("latin1", at + 1, end < 0 ? undefined : end));
  }
  return { transitions, types, table, footer };
}

let cached: { key: string; zone: Zone | undefined } | undefined;

/** This process's zone: $TZ (a zone name, a file, or a POSIX rule), else /etc/localtime. */
function localZone(): Zone | undefined {
  const tz = process.env.TZ;
  const key = tz ?? "";
  if (cached?.key === key) return cached.zone;
  let zone: Zone | undefined;
  const name = tz?.replace(/^:/, "");
  const file = !name ? "/etc/localtime" : path.isAbsolute(name) ? name : path.join("/usr/share/zoneinfo", name);
  try {
    zone = readTzif(fs.readFileSync(file));
  } catch {
    zone = undefined;
  }
  if (!zone && name) {
    const footer = parsePosix(name);
    if (footer) zone = { transitions: [], types: [], table: [], footer };
  }
  cached = { key, zone };
  return zone;
}

/** The zone's offset and name at `epoch` (seconds). */
function zoneAt(epoch: number): ZoneType {
  // what JavaScript knows (its offset, east of UTC) stands in where the file is silent
  const jsOffset = -new Date(epoch * 1000).getTimezoneOffset() * 60;
  const zone = localZone();
  if (zone) {
    const { transitions, types, table, footer } = zone;
    const last = transitions.length - 1;
    if (last >= 0 && epoch < transitions[0] && table.length) return table[0];
    if (last >= 0 && (epoch < transitions[last] || !footer)) {
      let lo = 0;
      let hi = last;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (transitions[mid] <= epoch) lo = mid;
        else hi = mid - 1;
      }
      return table[types[lo]];
    }
    if (footer) {
      if (!footer.dst || jsOffset === footer.std.offset) return footer.std;
      return { offset: jsOffset, name: footer.dst.name };
    }
    if (table.length) return table[0];
  }
  const sign = jsOffset < 0 ? "-" : "+";
  const abs = Math.abs(jsOffset);
  const hhmm = `${String(Math.floor(abs / 3600)).padStart(2, "0")}${String(Math.floor((abs % 3600) / 60)).padStart(2, "0")}`;
  return { offset: jsOffset, name: `${sign}${hhmm}` };
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  year -= month <= 2 ? 1 : 0;
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** Whole seconds since the epoch of `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`, else undefined. */
export function epochOf(iso: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})$/.exec(iso);
  if (!m) return undefined;
  let offset = 0;
  if (m[8] !== "Z") {
    const sign = m[8][0] === "+" ? 1 : -1;
    offset = sign * (Number(m[8].slice(1, 3)) * 3600 + Number(m[8].slice(4, 6)) * 60);
  }
  const days = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  return days * 86400 + Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6] ?? 0) - offset;
}

const pad = (n: number) => String(n).padStart(2, "0");

function localParts(epoch: number): { date: string; clock: string; zone: string } {
  const zone = zoneAt(epoch);
  const shifted = new Date((epoch + zone.offset) * 1000);
  return {
    date: `${shifted.getUTCFullYear()}-${pad(shifted.getUTCMonth() + 1)}-${pad(shifted.getUTCDate())}`,
    clock: `${pad(shifted.getUTCHours())}:${pad(shifted.getUTCMinutes())}`,
    zone: zone.name,
  };
}

/** `2026-12-02 09:41 CET` in this machine's zone; `-` for none; what is not a time, as it
 *  is. `todayShort`: a moment of today as `09:41 CET` (a conversation's lines). */
export function localTime(iso: string | null | undefined, todayShort = false): string {
  if (!iso) return "-";
  const epoch = epochOf(iso);
  if (epoch === undefined) return iso;
  const parts = localParts(epoch);
  if (todayShort && parts.date === localParts(Math.floor(Date.now() / 1000)).date) {
    return `${parts.clock} ${parts.zone}`;
  }
  return `${parts.date} ${parts.clock} ${parts.zone}`;
}

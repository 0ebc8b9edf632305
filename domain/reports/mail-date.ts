import { stripComments } from './header-fields.ts'

// RFC 5322 §3.3 date-time, with the obsolete forms of §4.3 that report generators still write
// (two-digit years, zone names like EDT). Parsed by hand so the result does not depend on how a
// JavaScript engine reads dates.

const MONTHS: Record<string, number> = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
}

// RFC 5322 §4.3 obs-zone, in hours east of UTC. Military single letters are treated as -0000
// ("no information"), as §4.3 says, and so is anything unknown.
const ZONES: Record<string, number> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -5,
  edt: -4,
  cst: -6,
  cdt: -5,
  mst: -7,
  mdt: -6,
  pst: -8,
  pdt: -7,
}

const DATE_TIME =
  /^(?:[a-z]{3,9},?\s*)?(\d{1,2})\s*([a-z]{3})[a-z]*\s*(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([+-]\d{4}|[a-z]{1,5}))?$/i

/** Unix seconds of an RFC 5322 date, or null when it does not read as one. */
export function parseMailDate(value: string): number | null {
  const match = DATE_TIME.exec(stripComments(value))
  if (!match) return null
  const day = Number(match[1])
  const month = MONTHS[match[2]!.toLowerCase()]
  let year = Number(match[3])
  // RFC 5322 §4.3: two-digit years 00-49 are 2000-2049, 50-99 and three-digit years add 1900.
  if (match[3]!.length === 2) year += year < 50 ? 2000 : 1900
  else if (match[3]!.length === 3) year += 1900
  const hour = Number(match[4])
  const minute = Number(match[5])
  const second = match[6] === undefined ? 0 : Number(match[6])
  if (month === undefined || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null
  const zone = match[7] ?? '+0000'
  let offsetMinutes = 0
  if (/^[+-]\d{4}$/.test(zone)) {
    const sign = zone.startsWith('-') ? -1 : 1
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5)))
  } else {
    offsetMinutes = (ZONES[zone.toLowerCase()] ?? 0) * 60
  }
  const utc = Date.UTC(year, month, day, hour, minute, Math.min(second, 59))
  return Math.floor(utc / 1000) - offsetMinutes * 60
}

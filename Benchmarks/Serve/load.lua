-- wrk script of the serve benchmark. Usage: wrk ... -s load.lua URL -- MODE FILE THREADS [BASE SPAN]
--   variants: FILE has one path template per source with {W} where the size goes; request n
--             asks source n % sources at W = BASE + (263 * (n / sources)) % SPAN (default 200
--             and 513): 263 is prime and SPAN no multiple of it, so the first sources * SPAN
--             requests are all different variants (no result cache can help) and every stretch
--             of the run spreads over BASE to BASE + SPAN - 1 (200-712 by default).
--   repeat:   FILE has one path per line, asked again and again in turn.
--   revalidate: FILE has "path<TAB>etag" per line; every request carries If-None-Match and
--             the statuses are counted (a 304 is the expected answer).
-- done() prints one JSON line: requests, duration, errors, latency percentiles, statuses.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local function split(line)
  local tab = line:find("\t", 1, true)
  if tab then return line:sub(1, tab - 1), line:sub(tab + 1) end
  return line, nil
end

function init(args)
  mode = args[1]
  stride = tonumber(args[3] or "1")
  base = tonumber(args[4] or "200")
  span = tonumber(args[5] or "513")
  paths, etags = {}, {}
  for line in io.lines(args[2]) do
    if #line > 0 then
      local path, etag = split(line)
      table.insert(paths, path)
      table.insert(etags, etag)
    end
  end
  n = id or 0
  s200, s304, sother = 0, 0, 0
  if mode == "revalidate" then
    response = function(status, headers, body)
      if status == 304 then s304 = s304 + 1
      elseif status == 200 then s200 = s200 + 1
      else sother = sother + 1 end
    end
  end
end

function request()
  local count = #paths
  local index = n % count
  local headers = nil
  local path
  if mode == "variants" then
    local width = base + (263 * math.floor(n / count)) % span
    path = paths[index + 1]:gsub("{W}", tostring(width))
  else
    path = paths[index + 1]
  end
  if mode == "revalidate" then
    headers = {}
    for key, value in pairs(wrk.headers) do headers[key] = value end
    headers["If-None-Match"] = etags[index + 1]
  end
  n = n + stride
  return wrk.format("GET", path, headers)
end

function done(summary, latency, requests)
  local c200, c304, cother = 0, 0, 0
  for _, thread in ipairs(threads) do
    c200 = c200 + (thread:get("s200") or 0)
    c304 = c304 + (thread:get("s304") or 0)
    cother = cother + (thread:get("sother") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "max": %d}, "statuses": {"200": %d, "304": %d, "other": %d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    c200, c304, cother))
end

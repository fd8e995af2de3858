"""The Lua scripts of the shared frontier (``crawler.shared``): each runs atomically in Redis,
so that N crawl processes see one queue, one seen-set, one count of requests in flight per
host and one table of leases.

Keys (``P`` is the frontier's key prefix, ``FRONTIER_REDIS_PREFIX``):

``P:seen`` (set)
    URLs claimed by some process (queued, leased or recorded).
``P:levels`` (sorted set)
    Levels (``-request.priority``: the depth; a mirror validation fetch -100) holding queued
    requests, scored by level.
``P:rr:<level>`` (list)
    The registrable domains queued at a level, in round-robin order.
``P:q:<level>:<domain>`` (list)
    The domain's queued entries at that level, FIFO: ``host <US> url``.
``P:req`` (hash)
    URL -> the serialised request, from push until the URL's page is stored.
``P:hlen``, ``P:dlen`` (hashes), ``P:len`` (string)
    Queued requests per host, per registrable domain and in all (the queue caps).
``P:leases`` (hash)
    URL -> ``owner <US> level <US> domain <US> host`` of a popped request whose page is not
    stored yet; ``P:held:<owner>`` (set) the URLs an owner holds.
``P:inflight:<host>`` (hash)
    token -> owner of each request to the host in a downloader now;
    ``P:slots:<owner>`` (set) ``host <US> token`` of an owner's.
``P:owners`` (set), ``P:alive:<owner>`` (string with a time to live)
    The processes of the crawl and their heartbeats.
"""

from __future__ import annotations

#: Separator inside entries (ASCII unit separator: never in a URL or a host name).
SEP = "\x1f"
#: Between a URL and the token of a request that does not claim it (``PUSH``).
KEY_SEP = "\x1e"

#: Requeue one entry at the front of its level and domain (shared by ``PUSH`` and ``RECLAIM``).
_ENQUEUE = """
local function enqueue(P, level, domain, host, url, front)
  local q = P .. 'q:' .. level .. ':' .. domain
  if redis.call('LLEN', q) == 0 then
    redis.call('RPUSH', P .. 'rr:' .. level, domain)
  end
  if front then
    redis.call('LPUSH', q, host .. '\\31' .. url)
  else
    redis.call('RPUSH', q, host .. '\\31' .. url)
  end
  redis.call('ZADD', P .. 'levels', level, level)
  redis.call('HINCRBY', P .. 'hlen', host, 1)
  redis.call('HINCRBY', P .. 'dlen', domain, 1)
  redis.call('INCR', P .. 'len')
end
"""

#: ARGV: prefix, host cap, domain cap, then for each request: claim (1: the URL must be
#: unseen, and is seen from now on), level, domain, host, key, payload. A claimed request's
#: key is its URL; another's is its URL, ``KEY_SEP`` and a token of its own, so that a
#: retry or a redirect's next hop never takes the place of the URL's own request. Returns one reply per request: '' queued,
#: else why not (``seen``, ``queue-host-cap``, ``queue-domain-cap``).
PUSH = _ENQUEUE + """
local P = ARGV[1]
local host_cap, domain_cap = tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for i = 4, #ARGV, 6 do
  local claim, level, domain, host, url, payload = ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4], ARGV[i+5]
  local reason = ''
  if claim == '1' and redis.call('SISMEMBER', P .. 'seen', url) == 1 then
    reason = 'seen'
  elseif tonumber(redis.call('HGET', P .. 'hlen', host) or '0') >= host_cap then
    reason = 'queue-host-cap'
  elseif tonumber(redis.call('HGET', P .. 'dlen', domain) or '0') >= domain_cap then
    reason = 'queue-domain-cap'
  else
    if claim == '1' then redis.call('SADD', P .. 'seen', url) end
    redis.call('HSET', P .. 'req', url, payload)
    enqueue(P, level, domain, host, url, false)
  end
  out[#out + 1] = reason
end
return out
"""

#: ARGV: prefix, owner, requests per host in flight, levels to look at, domains to look at
#: per level. The first domain in round-robin order of the shallowest level whose head's
#: host has fewer than the limit in flight (anywhere) is popped and rotated to the end;
#: the URL is leased to ``owner``. Returns {url, payload} or nil.
POP = """
local P, owner = ARGV[1], ARGV[2]
local per_host, lookahead, width = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local levels = redis.call('ZRANGE', P .. 'levels', 0, lookahead)
for _, level in ipairs(levels) do
  local rr = P .. 'rr:' .. level
  local domains = redis.call('LRANGE', rr, 0, width - 1)
  for _, domain in ipairs(domains) do
    local q = P .. 'q:' .. level .. ':' .. domain
    local head = redis.call('LINDEX', q, 0)
    if head then
      local sep = string.find(head, '\\31', 1, true)
      local host = string.sub(head, 1, sep - 1)
      if per_host == 0 or redis.call('HLEN', P .. 'inflight:' .. host) < per_host then
        local url = string.sub(head, sep + 1)
        redis.call('LPOP', q)
        redis.call('LREM', rr, 1, domain)
        if redis.call('LLEN', q) > 0 then
          redis.call('RPUSH', rr, domain)
        elseif redis.call('LLEN', rr) == 0 then
          redis.call('ZREM', P .. 'levels', level)
        end
        if redis.call('HINCRBY', P .. 'hlen', host, -1) <= 0 then redis.call('HDEL', P .. 'hlen', host) end
        if redis.call('HINCRBY', P .. 'dlen', domain, -1) <= 0 then redis.call('HDEL', P .. 'dlen', domain) end
        redis.call('DECR', P .. 'len')
        redis.call('HSET', P .. 'leases', url, owner .. '\\31' .. level .. '\\31' .. domain .. '\\31' .. host)
        redis.call('SADD', P .. 'held:' .. owner, url)
        return {url, redis.call('HGET', P .. 'req', url) or ''}
      end
    end
  end
end
return nil
"""

#: ARGV: prefix, owner, URLs whose pages are stored (or that will never have one): their
#: leases end (only those ``owner`` holds) and their requests are forgotten. Returns how
#: many leases ended.
DONE = """
local P, owner = ARGV[1], ARGV[2]
local ended = 0
for i = 3, #ARGV do
  local url = ARGV[i]
  local lease = redis.call('HGET', P .. 'leases', url)
  if lease and string.sub(lease, 1, #owner + 1) == owner .. '\\31' then
    redis.call('HDEL', P .. 'leases', url)
    redis.call('HDEL', P .. 'req', url)
    ended = ended + 1
  end
  redis.call('SREM', P .. 'held:' .. owner, url)
end
return ended
"""

#: ARGV: prefix, owner, host, token, limit. Takes one of the host's in-flight slots for the
#: whole crawl: 1 when taken, 0 when the host has ``limit`` requests in flight already.
ACQUIRE = """
local P, owner, host, token, limit = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local key = P .. 'inflight:' .. host
if redis.call('HLEN', key) >= limit then return 0 end
redis.call('HSET', key, token, owner)
redis.call('SADD', P .. 'slots:' .. owner, host .. '\\31' .. token)
return 1
"""

#: ARGV: prefix, owner, host, token. Gives the slot back.
FREE = """
local P, owner, host, token = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
redis.call('HDEL', P .. 'inflight:' .. host, token)
redis.call('SREM', P .. 'slots:' .. owner, host .. '\\31' .. token)
return 1
"""

#: ARGV: prefix. Every owner without a heartbeat (its ``alive`` key expired): the URLs it
#: held go back to the front of their queues, its in-flight slots are freed, it is
#: forgotten. Returns the URLs requeued.
RECLAIM = _ENQUEUE + """
local P = ARGV[1]
local requeued = 0
for _, owner in ipairs(redis.call('SMEMBERS', P .. 'owners')) do
  if redis.call('EXISTS', P .. 'alive:' .. owner) == 0 then
    for _, url in ipairs(redis.call('SMEMBERS', P .. 'held:' .. owner)) do
      local lease = redis.call('HGET', P .. 'leases', url)
      if lease and string.sub(lease, 1, #owner + 1) == owner .. '\\31' then
        local parts = {}
        for part in string.gmatch(string.sub(lease, #owner + 2), '[^\\31]+') do parts[#parts + 1] = part end
        redis.call('HDEL', P .. 'leases', url)
        enqueue(P, parts[1], parts[2], parts[3], url, true)
        requeued = requeued + 1
      end
    end
    for _, slot in ipairs(redis.call('SMEMBERS', P .. 'slots:' .. owner)) do
      local sep = string.find(slot, '\\31', 1, true)
      redis.call('HDEL', P .. 'inflight:' .. string.sub(slot, 1, sep - 1), string.sub(slot, sep + 1))
    end
    redis.call('DEL', P .. 'held:' .. owner, P .. 'slots:' .. owner)
    redis.call('SREM', P .. 'owners', owner)
  end
end
return requeued
"""

#: ARGV: prefix. 1 when nothing is queued and nothing is leased anywhere: the crawl is over.
FINISHED = """
local P = ARGV[1]
if redis.call('ZCARD', P .. 'levels') == 0 and redis.call('HLEN', P .. 'leases') == 0 then return 1 end
return 0
"""

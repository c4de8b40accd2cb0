-- A memoising lookup: keys come from a parsed list, one of them missing
-- (nil); looking a nil key up in a table reads nil in Lua.
local cache = {}
local function lookup(k)
  local v = cache[k]
  if v == nil then v = "miss" end
  return v
end
local keys = { "a", "b", "c" }
for i, k in ipairs(keys) do cache[k] = i * 10 end
for i = 1, 4 do print(i, keys[i], lookup(keys[i])) end

-- The Lua harness workload: tables, closures, strings, metatables,
-- coroutines, and errors raised and caught (error/pcall, which Lua
-- implements with longjmp back to setjmp), interleaved with prints.

-- A deep parse first: 60 nested parentheses (a deep recursion of the
-- parser, a crash point of the harness: subexpr at its 61st call).
local nested = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib", fib(15))

local words = {}
for w in ("the quick brown fox jumps over the lazy dog again and again"):gmatch("%a+") do
  words[#words + 1] = w
end
table.sort(words, function(a, b) return #a < #b or (#a == #b and a < b) end)
print("sorted", table.concat(words, ","))

local counts = setmetatable({}, { __index = function() return 0 end })
for _, w in ipairs(words) do counts[w] = counts[w] + 1 end
print("again", counts.again, "cat", counts.cat)

local function checked_div(a, b)
  if b == 0 then error("division by zero: " .. a) end
  return a // b
end
for i = 3, 0, -1 do
  local ok, res = pcall(checked_div, 100, i)
  print("div", i, ok, res)
end

local ok, err = pcall(function() local t = nil; return t.field end)
print("nil index caught", ok, err)

local ok2, err2 = xpcall(function() error({ code = 42 }) end,
  function(e) return "handled " .. tostring(e.code) end)
print("xpcall", ok2, err2)

local gen = coroutine.wrap(function()
  for i = 1, 4 do coroutine.yield(i * i) end
  error("generator exhausted")
end)
local sum = 0
while true do
  local okc, v = pcall(gen)
  if not okc then print("coroutine error", v) break end
  sum = sum + v
end
print("squares", sum)

local parts = {}
for i = 1, 200 do parts[#parts + 1] = string.format("%03d:%x", i, i * 7) end
local s = table.concat(parts, ";")
print("len", #s, s:sub(1, 20), select(2, s:gsub("0", "o")))

local okl, errl = load("return 1 +")
print("load error", okl, errl)
local f = load("local x = ... return x * 2")
print("loaded", f(21))

local Point = {}
Point.__index = Point
Point.__add = function(a, b) return setmetatable({ x = a.x + b.x, y = a.y + b.y }, Point) end
Point.__tostring = function(p) return "(" .. p.x .. "," .. p.y .. ")" end
local p = setmetatable({ x = 1, y = 2 }, Point) + setmetatable({ x = 3, y = 4 }, Point)
print("point", tostring(p))

local big = {}
for i = 1, 2000 do big[i] = { i, tostring(i) } end
collectgarbage()
print("big", #big, collectgarbage("count") > 0)

local okm, errm = pcall(string.rep)
print("bad argument caught", okm, errm)
print("done")

-- Closures over locals of a function that has returned (closed upvalues).
local function counter(start, step)
  local n = start
  return function() n = n + step; return n end
end
local c1 = counter(10, 1)
local c2 = counter(100, 5)
print("counters", c1(), c1(), c2())

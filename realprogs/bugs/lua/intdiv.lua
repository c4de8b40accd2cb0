-- Integer floor divisions over a range of signed values, including the
-- extremes (Lua defines mininteger // -1 as mininteger, wrapping around).
local vals = { 7, -7, 100, math.maxinteger, math.mininteger }
local divs = { 2, -3, 1, -1 }
for _, a in ipairs(vals) do
  for _, b in ipairs(divs) do
    io.write(string.format("%d//%d=%d  ", a, b, a // b))
  end
  print()
end

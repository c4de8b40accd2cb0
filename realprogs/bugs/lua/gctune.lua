-- Tunes the incremental collector with a small step multiplier, then
-- allocates many small tables.
collectgarbage("incremental", 150, 2)
local keep = {}
for i = 1, 50000 do
  local t = { i, tostring(i) }
  if i % 100 == 0 then keep[#keep + 1] = t end
end
print("kept", #keep)

-- An undo history indexed by a computed position; a bad offset gives a
-- far negative index, whose lookup in Lua reads nil.
local hist = {}
for i = 1, 16 do hist[i] = "state" .. i end
local function at(pos) return hist[pos] end
print(at(3), at(16), at(17))
local base = -tonumber("1000000000")  -- a corrupted offset
print(at(base + 5))

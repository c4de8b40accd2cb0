-- Joins many fields into one large CSV-like line with table.concat
-- (a buffer that grows well beyond the stack buffer).
local fields = {}
for i = 1, 60000 do fields[i] = string.format("field%05d", i) end
local line = table.concat(fields, ",")
print("joined", #line, line:sub(1, 30))

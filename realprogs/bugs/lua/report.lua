-- Formats a small table report, padding each column to its width with
-- string.rep; the last column has width 0 (no padding).
local cols = { { "name", 8 }, { "size", 6 }, { "flag", 1 } }
local rows = { { "alpha", 12, "y" }, { "beta", 7, "n" }, { "gamma", 300, "y" } }
local function pad(s, width)
  s = tostring(s)
  return s .. string.rep(" ", width - #s)
end
for _, r in ipairs(rows) do
  local out = {}
  for i, c in ipairs(cols) do out[#out + 1] = pad(r[i], c[2]) end
  print(table.concat(out, "|"))
end

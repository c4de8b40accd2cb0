-- Tries to open a configuration file that does not exist, reports the
-- failure and goes on; the half-made file handle is later collected.
local function readconf(path)
  local f, err = io.open(path, "r")
  if not f then print("no config:", err) return {} end
  local t = {} for line in f:lines() do t[#t + 1] = line end f:close()
  return t
end
local conf = readconf("/nonexistent/dir/app.conf")
print("entries", #conf)
collectgarbage()
print("after gc")

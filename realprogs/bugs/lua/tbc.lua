-- A to-be-closed variable releases a lock at the end of its scope.
local function lock(name)
  return setmetatable({ name = name }, {
    __close = function(l) print("unlock", l.name) end })
end
local function critical(name)
  local l <close> = lock(name)
  print("in critical section", l.name)
end
print("start")
critical("db")
print("done")

-- Ships a function as stripped bytecode (no debug names), loads it back
-- and calls it in protected mode while one of its upvalues is still nil.
local function make()
  local settings
  return function(key)
    local out = tostring(key)
    return out .. "=" .. settings[key]
  end
end
local code = string.dump(make(), true)
local f = load(code, "=bytecode", "b")
print("loaded", type(f))
local ok, err = pcall(f, "depth")
print("call", ok, err)

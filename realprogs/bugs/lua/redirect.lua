-- Redirects the default output to a collecting table (not a file handle:
-- io.output should reject it), then writes through io.write.
local sink = { lines = {} }
print("before redirect")
local ok, err = pcall(io.output, sink)
print("redirect", ok, err)
io.write("hello\n")
print("after write")

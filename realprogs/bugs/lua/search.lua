-- Plain (no magic characters) substring searches in a long text.
local text = string.rep("lorem ipsum dolor sit amet ", 200)
print(string.find(text, "dolor"))
print(string.find(text, "amet", 30, true))
local marker = string.char(0xfe, 0xfd, 0xfc, 0xfb)
print("marker at", string.find(text, marker))

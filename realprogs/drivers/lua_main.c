/* The Lua harness program's main (lua-src ships the interpreter's library
 * but not lua.c): run each script named on the command line in one state,
 * print an uncaught error and go on with the next script. */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

int main(int argc, char **argv) {
    lua_State *L = luaL_newstate();
    int status = 0;
    if (L == NULL) {
        fprintf(stderr, "cannot create a Lua state\n");
        return 1;
    }
    luaL_openlibs(L);
    for (int i = 1; i < argc; i++) {
        if (luaL_dofile(L, argv[i]) != LUA_OK) {
            printf("error: %s\n", lua_tostring(L, -1));
            lua_pop(L, 1);
            status = 1;
        }
    }
    lua_close(L);
    return status;
}

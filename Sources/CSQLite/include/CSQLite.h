#ifndef NEARCARD_CSQLITE_H
#define NEARCARD_CSQLITE_H
#include <sqlite3.h>

// What the store needs of SQLite that GRDB does not offer and Swift cannot call itself
// (sqlite3_db_config is variadic). SQLite itself is GRDB's, linked through it.

// The connection leaves the WAL as it is when it closes, instead of checkpointing it into the
// database (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE): for a command that runs once, whose commits are
// synced to the WAL as they are made (synchronous = FULL). Returns SQLITE_OK or SQLite's error code.
int nearcard_sqlite_no_checkpoint_on_close(sqlite3 *db);
#endif

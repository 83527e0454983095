#include "CSQLite.h"

int nearcard_sqlite_no_checkpoint_on_close(sqlite3 *db) {
    int on = 0;
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &on);
    return rc == SQLITE_OK && on == 1 ? SQLITE_OK : (rc == SQLITE_OK ? SQLITE_ERROR : rc);
}

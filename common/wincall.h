/* wincall.h - the Win32 calls the *_win.c files make through a table, so
 * that a test can make one fail or answer the ways Wine never does (a
 * listed folder whose name will not open, OpenFileById refused, a file not
 * on this disk), as SQLite's os_unix.c does with its system calls.  The table holds the system's functions
 * unless a test put its own in; the test puts them back.  Windows only:
 * includes <windows.h>. */
#ifndef SL_WINCALL_H
#define SL_WINCALL_H

#include <windows.h>

struct win_calls {
	/* walk_win.c opening folders */
	HANDLE(WINAPI *create_file)(LPCWSTR, DWORD, DWORD, LPSECURITY_ATTRIBUTES, DWORD, DWORD,
				    HANDLE);
	/* win_open_by_id: the change journal's files, the walk's folders */
	HANDLE(WINAPI *open_by_id)(HANDLE, LPFILE_ID_DESCRIPTOR, DWORD, DWORD,
				   LPSECURITY_ATTRIBUTES, DWORD);
	/* win_handle_kind: the attributes of an open file (Wine keeps none
	 * of OFFLINE and RECALL_*) */
	BOOL(WINAPI *file_info)(HANDLE, LPBY_HANDLE_FILE_INFORMATION);
};

extern struct win_calls win_call;

#endif

"""A run's live reply in its thread: a stream with a task timeline or a message updated as the run goes
(`medium` chooses, `stream` and `updates` send, `throttle` paces), its progress (`progress`), the thread's
status line (`status`), the mark of its end (`marks`), and the core's `Replies` over all of them (`thread`)."""

"""The reviewer channel: the message each escalation gets and its updates (`notifier`), the decisions taken
there (`desk`), who may take them (`reviewers`), and their Block Kit (`blocks`)."""

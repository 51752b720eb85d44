"""The REST API of judging: judges and their connections (judges), runs and their verdicts
(runs), and what reviewers read and settle: disagreements, adjudications, judge quality and
agreement (review)."""

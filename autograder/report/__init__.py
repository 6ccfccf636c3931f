"""What graders and students read: per-submission reports, gradebook CSVs, the class report."""

"""What the judging API shows and accepts, a module for each part of it (see judging/api/)."""

"""Domain records, pure query specs and the two database backends behind one async interface."""

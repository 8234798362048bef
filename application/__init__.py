"""The application assembly: the one module that mounts every HTTP room (server, taxii) on one
Tornado application, and the embedded scheduler that runs the background jobs in-process."""

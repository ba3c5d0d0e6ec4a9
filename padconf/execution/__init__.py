"""The execution layer: the worker processes adapters run in. worker_child, worker_protocol and
reaper are the worker side; worker, worker_process and runtimes drive it from padconf's side.
"""

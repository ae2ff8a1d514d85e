"""Where a contract boots when it is not a child of evalrun: another host over ssh, a Slurm job, or
a container on this machine (container.py: docker or podman).

spec.py is the contract's `launch:` block (local | ssh | slurm | container); wrapper.py is the small program
evalrun runs next to the engine on the other machine (it starts the engine in its own process
group, records its pid there, and stops the group when evalrun hangs up); ssh.py and slurm.py
are the two launch targets, each a `RemoteEngine` the launcher waits on and tears down
(engine.py). Nothing here imports the launcher: the launcher imports these.
"""

import sys, lift
from lift.ir.program_file import load_program_file
pf = load_program_file(sys.argv[1]); name, expr = pf.kernel(next((a for a in sys.argv[2:] if a != "-s"), None))
prog = lift.compile(expr, sizes=pf.bind(), name=name, lowering="default")
print(lift.paper(prog.lowered(pf.bind())))
if "-s" in sys.argv: print(prog.source)

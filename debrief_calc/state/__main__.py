from debrief_calc.cli import main_state

if __name__ == "__main__":
    main_state()

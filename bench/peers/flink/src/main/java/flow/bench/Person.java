package flow.bench;

/** A Nexmark person (a Flink POJO: public fields, no-argument constructor). */
public class Person {
  public long id;
  public String name;
  public String emailAddress;
  public String creditCard;
  public String city;
  public String state;
  public long dateTime;
  public String extra;

  public Person() {}
}
